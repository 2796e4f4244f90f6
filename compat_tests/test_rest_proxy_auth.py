"""The REST proxy of a broker with an authorizer (issue 30): every caller logs in with HTTP Basic
credentials of the broker's SASL users, and the proxy acts toward the broker as that user (its
SASL_PLAINTEXT listener), so the broker's ACLs decide what each caller may read and write; ACLs are
managed through v3.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer

from compat_tests.broker_process import REPO_ROOT, BrokerProcess, free_port
from compat_tests.storage_support import wait_for

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" '
        'user_alice="alice-secret" user_bob="bob-secret";')
V2 = "application/vnd.kafka.v2+json"
JSON_RECORDS = "application/vnd.kafka.json.v2+json"


class SecuredRest:
    def __init__(self, work: Path) -> None:
        self.broker = BrokerProcess(work / "logs", name="rest-acls")
        self.sasl_port, self.rest_port = free_port(), free_port()
        listeners = f"PLAINTEXT://127.0.0.1:{self.broker.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}"
        self.broker.overrides.update({
            "listeners": listeners, "advertised.listeners": listeners, "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin;User:ANONYMOUS", "offsets.topic.replication.factor": "1",
            "auto.create.topics.enable": "false", "rest.listener": f"http://127.0.0.1:{self.rest_port}"})
        self.url = f"http://127.0.0.1:{self.rest_port}"

    def as_user(self, user: str | None, password: str | None = None) -> httpx.Client:
        auth = None if user is None else (user, password if password is not None else f"{user}-secret")
        return httpx.Client(base_url=self.url, auth=auth, timeout=60)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredRest]:
    server = SecuredRest(tmp_path_factory.mktemp("rest-acls"))
    server.broker.start()
    with server.as_user("admin") as admin:
        wait_for("the proxy answers", lambda: _status(admin, "/topics") == 200, timeout=60)
    yield server
    server.broker.close()


def _status(http: httpx.Client, path: str) -> int:
    try:
        return http.get(path).status_code
    except httpx.HTTPError:
        return 0


def _cluster(http: httpx.Client) -> str:
    return http.get("/v3/clusters").json()["data"][0]["cluster_id"]


def _allow(admin: httpx.Client, resource_type: str, name: str, principal: str, operation: str) -> None:
    answer = admin.post(f"/v3/clusters/{_cluster(admin)}/acls", headers={"Content-Type": "application/json"}, json={
        "resource_type": resource_type, "resource_name": name, "pattern_type": "LITERAL", "principal": principal,
        "host": "*", "operation": operation, "permission": "ALLOW"})
    assert answer.status_code == 201, answer.text


def test_callers_log_in_with_the_brokers_sasl_users(secured: SecuredRest) -> None:
    with secured.as_user(None) as nobody:
        answer = nobody.get("/topics")
        assert (answer.status_code, answer.json()["error_code"]) == (401, 40101)
        assert answer.headers["www-authenticate"].startswith("Basic")
    with secured.as_user("alice", "wrong") as wrong:
        assert wrong.get("/topics").status_code == 401
    with secured.as_user("mallory") as stranger:
        assert stranger.get("/topics").status_code == 401
    with secured.as_user("alice") as alice:
        assert alice.get("/topics").status_code == 200


def test_the_brokers_acls_decide_what_each_caller_reads_and_writes(secured: SecuredRest) -> None:
    with secured.as_user("admin") as admin, secured.as_user("alice") as alice, secured.as_user("bob") as bob:
        cluster_id = _cluster(admin)
        created = admin.post(f"/v3/clusters/{cluster_id}/topics", headers={"Content-Type": "application/json"},
                             json={"topic_name": "payroll", "partitions_count": 1})
        assert created.status_code == 201, created.text
        _allow(admin, "TOPIC", "payroll", "User:alice", "READ")
        _allow(admin, "TOPIC", "payroll", "User:alice", "DESCRIBE")
        _allow(admin, "GROUP", "accountants", "User:alice", "READ")
        _allow(admin, "GROUP", "accountants", "User:bob", "READ")

        # bob may not write the topic: his record is refused, and the answer is 403.
        refused = bob.post("/topics/payroll", headers={"Content-Type": JSON_RECORDS},
                           json={"records": [{"value": {"salary": 1}}]})
        assert (refused.status_code, refused.json()["error_code"]) == (403, 40301), refused.text
        written = admin.post("/topics/payroll", headers={"Content-Type": JSON_RECORDS},
                             json={"records": [{"value": {"salary": 100}}]})
        assert written.status_code == 200 and written.json()["offsets"][0]["error_code"] is None, written.text

        # alice reads it; bob's instance is refused (no READ on the topic): 40301, on assigning the
        # partition by hand, and on reading what it subscribed to.
        for http, name in ((alice, "alice-reader"), (bob, "bob-reader")):
            made = http.post("/consumers/accountants", headers={"Content-Type": V2},
                             json={"name": name, "format": "json", "auto.offset.reset": "earliest"})
            assert made.status_code == 200, made.text
        assigned = alice.post("/consumers/accountants/instances/alice-reader/assignments",
                              headers={"Content-Type": V2}, json={"partitions": [{"topic": "payroll", "partition": 0}]})
        assert assigned.status_code == 204, assigned.text
        not_assigned = bob.post("/consumers/accountants/instances/bob-reader/assignments", headers={"Content-Type": V2},
                                json={"partitions": [{"topic": "payroll", "partition": 0}]})
        assert (not_assigned.status_code, not_assigned.json()["error_code"]) == (403, 40301), not_assigned.text
        assert bob.post("/consumers/accountants/instances/bob-reader/subscription", headers={"Content-Type": V2},
                        json={"topics": ["payroll"]}).status_code == 204
        got: list[Any] = []

        def alice_reads() -> bool:
            answer = alice.get("/consumers/accountants/instances/alice-reader/records", params={"timeout": 1000},
                               headers={"Accept": JSON_RECORDS})
            assert answer.status_code == 200, answer.text
            got.extend(answer.json())
            return bool(got)

        wait_for("alice's record", alice_reads, timeout=60, interval=0)
        assert [r["value"] for r in got] == [{"salary": 100}]

        def bob_refused() -> bool:
            answer = bob.get("/consumers/accountants/instances/bob-reader/records", params={"timeout": 1000},
                             headers={"Accept": JSON_RECORDS})
            assert answer.status_code in (200, 403), answer.text
            assert answer.status_code == 403 or answer.json() == []
            return answer.status_code == 403 and answer.json()["error_code"] == 40301

        wait_for("bob refused", bob_refused, timeout=60, interval=0)
        # An instance is its maker's: another caller may not use it.
        theirs = admin.get("/consumers/accountants/instances/alice-reader/assignments")
        assert (theirs.status_code, theirs.json()["error_code"]) == (403, 40301)
        for http, name in ((alice, "alice-reader"), (bob, "bob-reader")):
            assert http.delete(f"/consumers/accountants/instances/{name}").status_code == 204

        # Managing ACLs is itself the cluster's to allow.
        denied = bob.post(f"/v3/clusters/{cluster_id}/acls", headers={"Content-Type": "application/json"},
                          json={"resource_type": "TOPIC", "resource_name": "payroll", "pattern_type": "LITERAL",
                                "principal": "User:bob", "host": "*", "operation": "READ", "permission": "ALLOW"})
        assert (denied.status_code, denied.json()["error_code"]) == (403, 40301), denied.text


def test_acls_are_listed_and_deleted_through_v3(secured: SecuredRest) -> None:
    with secured.as_user("admin") as admin:
        cluster_id = _cluster(admin)
        acls = f"/v3/clusters/{cluster_id}/acls"
        acl = {"resource_type": "TOPIC", "resource_name": "ledger", "pattern_type": "LITERAL",
               "principal": "User:carol", "host": "*", "operation": "READ", "permission": "ALLOW"}
        created = admin.post(acls, headers={"Content-Type": "application/json"}, json=acl)
        assert created.status_code == 201, created.text
        assert "principal=User%3Acarol" in created.headers["location"]
        listed = admin.get(acls, params={"resource_type": "topic", "principal": "User:carol"}).json()
        assert listed["kind"] == "KafkaAclList"
        assert [{k: a[k] for k in acl} for a in listed["data"]] == [acl]
        bad = admin.post(acls, headers={"Content-Type": "application/json"}, content=json.dumps(
            {**acl, "operation": "ANY"}).encode())
        assert (bad.status_code, bad.json()["error_code"]) == (400, 400)
        assert admin.delete(acls, params={"resource_type": "TOPIC"}).status_code == 400
        deleted = admin.delete(acls, params={"resource_type": "TOPIC", "pattern_type": "LITERAL", "operation": "READ",
                                             "permission": "ALLOW", "resource_name": "ledger"}).json()
        assert [{k: a[k] for k in acl} for a in deleted["data"]] == [acl]
        assert admin.get(acls, params={"principal": "User:carol"}).json()["data"] == []


def test_basic_credentials_are_plain_base64(secured: SecuredRest) -> None:
    """A header httpx did not make: curl's ``-u alice:alice-secret``."""
    header = "Basic " + base64.b64encode(b"alice:alice-secret").decode()
    assert httpx.get(secured.url + "/brokers", headers={"Authorization": header}).status_code == 200
    assert httpx.get(secured.url + "/brokers", headers={"Authorization": "Basic !!"}).status_code == 401


def test_a_standalone_proxy_with_basic_auth_logs_each_caller_in_to_the_cluster(secured: SecuredRest,
                                                                               tmp_path: Path) -> None:
    """``pykafkad rest --basic-auth``: the caller's credentials are the SASL login; the cluster judges
    them (a wrong password is refused by the broker, and answered 401)."""
    port = free_port()
    args = ["--bootstrap-server", f"127.0.0.1:{secured.sasl_port}", "--listener", f"http://127.0.0.1:{port}",
            "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN", "--basic-auth"]
    log = tmp_path / "rest.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pykafkad", "rest", *args], cwd=REPO_ROOT,
                                env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, stdout=out, stderr=out)
        try:
            alice = httpx.Client(base_url=f"http://127.0.0.1:{port}", auth=("alice", "alice-secret"), timeout=60)
            wait_for("the standalone proxy answers alice", lambda: _status(alice, "/brokers") == 200, timeout=60)
            assert httpx.get(f"http://127.0.0.1:{port}/brokers", timeout=30).status_code == 401
            wrong = httpx.get(f"http://127.0.0.1:{port}/brokers", auth=("alice", "nope"), timeout=60)
            assert (wrong.status_code, wrong.json()["error_code"]) == (401, 40101), wrong.text
            alice.close()
        finally:
            proc.terminate()
            assert proc.wait(30) == 0
    assert b"Traceback" not in log.read_bytes(), log.read_text()[-3000:]


def test_with_an_authorizer_and_no_sasl_listener_the_proxy_stays_off_and_says_why(tmp_path: Path) -> None:
    """Callers of the proxy of a broker with an authorizer log in on its SASL_PLAINTEXT listener;
    without one, the proxy does not start (it would serve every caller as nobody), the broker says
    why in one line, and goes on serving Kafka."""
    rest_port = free_port()
    broker = BrokerProcess(tmp_path / "logs", {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS", "offsets.topic.replication.factor": "1",
        "rest.listener": f"http://127.0.0.1:{rest_port}"}, name="rest-no-sasl")
    broker.start()
    try:
        wait_for("the reason in the log", lambda: "rest proxy: not started: with an authorizer, rest.listener needs "
                 "a SASL_PLAINTEXT listener" in broker.stderr_text(), timeout=30)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{rest_port}/topics", timeout=5)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce("still-served", b"v")
        assert producer.flush(30) == 0
        assert "Traceback" not in broker.stderr_text()
    finally:
        broker.close()
