"""The schema registry of a broker with an authorizer (issue 29): HTTP Basic credentials of the
broker's own SASL users (PLAIN from its JAAS config, SCRAM from its stored credentials), and the
broker's ACLs on the subject's topic: DESCRIBE to read a subject, WRITE to change it,
ALTER_CONFIGS on the cluster for the global level and mode.  confluent-kafka's
SchemaRegistryClient passes its ``basic.auth.user.info``.

The registry's own Kafka client reaches the broker on its PLAINTEXT listener as User:ANONYMOUS,
made a super user here so that the registry can create and write ``_schemas`` at start-up (a real
deployment gives it ACLs instead: docs/schema-registry.md).
"""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.storage_support import wait_for
from compat_tests.test_schema_registry import StandaloneRegistry

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" '
        'user_alice="alice-secret" user_bob="bob-secret";')
ORDER = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})


class SecuredRegistry:
    def __init__(self, work: Path) -> None:
        self.broker = BrokerProcess(work / "logs", name="registry-acls")
        self.sasl_port, self.http_port = free_port(), free_port()
        listeners = f"PLAINTEXT://127.0.0.1:{self.broker.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}"
        self.broker.overrides.update({
            "listeners": listeners, "advertised.listeners": listeners,
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin;User:ANONYMOUS", "offsets.topic.replication.factor": "1",
            "schema.registry.listener": f"http://127.0.0.1:{self.http_port}",
        })
        self.url = f"http://127.0.0.1:{self.http_port}"

    def admin(self) -> AdminClient:
        return AdminClient({"bootstrap.servers": f"127.0.0.1:{self.sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                            "sasl.mechanism": "PLAIN", "sasl.username": "admin", "sasl.password": "admin-secret"})

    def call(self, path: str, user: str | None, password: str | None = None, method: str = "GET",
             body: Any = None, url: str | None = None) -> tuple[int, Any, dict[str, str]]:
        """``path`` of this broker's registry, or of the one at ``url``, as ``user``."""
        headers = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
        if user is not None:
            secret = password if password is not None else f"{user}-secret"
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request((url or self.url) + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null"), dict(answer.headers)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null"), dict(e.headers)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredRegistry]:
    server = SecuredRegistry(tmp_path_factory.mktemp("registry-acls"))
    server.broker.start()
    wait_for("the registry answers", lambda: server.call("/", "admin")[0] == 200, timeout=60)
    admin = server.admin()
    admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"carol-secret")])["carol"].result(30)
    allow = [("User:alice", AclOperation.DESCRIBE), ("User:alice", AclOperation.WRITE),
             ("User:carol", AclOperation.DESCRIBE)]
    for future in admin.create_acls([AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, principal,
                                                "*", operation, AclPermissionType.ALLOW)
                                     for principal, operation in allow]).values():
        future.result(30)
    yield server
    server.broker.close()


def test_credentials_are_the_brokers_sasl_users(secured: SecuredRegistry) -> None:
    status, body, headers = secured.call("/subjects", None)
    assert (status, body["error_code"]) == (401, 40101)
    assert headers.get("www-authenticate", headers.get("WWW-Authenticate", "")).startswith("Basic")
    assert secured.call("/subjects", "alice", "wrong")[0] == 401
    assert secured.call("/subjects", "nobody")[0] == 401
    # PLAIN users of the SASL listener, and a SCRAM user (its credential stored in the cluster).
    assert secured.call("/subjects", "alice")[0] == 200
    wait_for("carol's SCRAM credential", lambda: secured.call("/subjects", "carol")[0] == 200)
    assert secured.call("/subjects", "carol", "alice-secret")[0] == 401


def test_acls_on_the_subjects_topic_decide_reads_and_writes(secured: SecuredRegistry) -> None:
    wait_for("carol's SCRAM credential", lambda: secured.call("/subjects", "carol")[0] == 200)
    status, registered, _ = secured.call("/subjects/orders-value/versions", "alice", method="POST",
                                         body={"schema": ORDER})
    assert status == 200, registered
    status, refused, _ = secured.call("/subjects/orders-value/versions", "bob", method="POST", body={"schema": ORDER})
    assert (status, refused["error_code"]) == (403, 40301) and "User:bob" in refused["message"]
    assert secured.call("/subjects/orders-value/versions", "bob")[0] == 403
    # carol may read (DESCRIBE), not write.
    assert secured.call("/subjects/orders-value/versions", "carol")[:2] == (200, [1])
    assert secured.call("/subjects/orders-value/versions", "carol", method="POST", body={"schema": ORDER})[0] == 403
    # A subject of another topic, registered by the super user: hidden from alice, its id refused.
    status, secret, _ = secured.call("/subjects/payroll-value/versions", "admin", method="POST",
                                     body={"schema": json.dumps({"type": "string"})})
    assert status == 200
    assert secured.call("/subjects", "alice")[:2] == (200, ["orders-value"])
    assert secured.call(f"/schemas/ids/{secret['id']}", "alice")[0] == 403
    assert secured.call(f"/schemas/ids/{registered['id']}", "carol")[0] == 200
    # The global level is the cluster's: ALTER_CONFIGS there, which only the super user has.
    assert secured.call("/config", "alice", method="PUT", body={"compatibility": "FULL"})[0] == 403
    assert secured.call("/config", "admin", method="PUT", body={"compatibility": "FULL"})[:2] == (
        200, {"compatibility": "FULL"})
    assert secured.call("/config", "admin", method="PUT", body={"compatibility": "BACKWARD"})[0] == 200


def test_confluents_client_passes_its_basic_auth_user_info(secured: SecuredRegistry) -> None:
    client = SchemaRegistryClient({"url": secured.url, "basic.auth.user.info": "alice:alice-secret"})
    schema_id = client.register_schema("orders-key", Schema(json.dumps({"type": "long"}), "AVRO"))
    assert client.get_schema(schema_id).schema_str == '{"type":"long"}'
    stranger = SchemaRegistryClient({"url": secured.url, "basic.auth.user.info": "bob:bob-secret"})
    with pytest.raises(SchemaRegistryError) as refused:
        stranger.register_schema("orders-key", Schema(json.dumps({"type": "long"}), "AVRO"))
    assert (refused.value.http_status_code, refused.value.error_code) == (403, 40301)


def _metric(url: str, name: str, user: str | None = None) -> float | None:
    """One value of the registry's /metrics (which, with an authorizer, needs credentials too)."""
    headers = {} if user is None else {
        "Authorization": "Basic " + base64.b64encode(f"{user}:{user}-secret".encode()).decode()}
    try:
        with urllib.request.urlopen(urllib.request.Request(url + "/metrics", headers=headers), timeout=10) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    return None if found is None else float(found.group(1))


def _group_members(secured: SecuredRegistry) -> int:
    """Members of the registries' group once it is stable with the partition assigned, else 0."""
    admin = secured.admin()  # kept while its future runs
    described = admin.describe_consumer_groups(["schema-registry-_schemas"])["schema-registry-_schemas"].result(10)
    if described.state != ConsumerGroupState.STABLE:
        return 0
    if not any(m.assignment and m.assignment.topic_partitions for m in described.members):
        return 0
    return len(described.members)


def test_a_write_forwarded_to_the_primary_carries_the_callers_credentials(secured: SecuredRegistry,
                                                                         tmp_path: Path) -> None:
    """An instance that is not the primary forwards a write with the caller's Authorization header,
    and the primary checks it.  The instance in front here is a standalone registry, which asks for
    no credentials itself, so every refusal below is the broker's registry judging the forwarded
    header."""
    wait_for("the broker's registry is the primary",
             lambda: _metric(secured.url, "pykafkad_schema_registry_primary", "admin") == 1, timeout=60)
    front = StandaloneRegistry(f"127.0.0.1:{secured.broker.port}", tmp_path / "front.log")
    try:
        # The group settles with both, the partition (the primary) left where it was.
        wait_for("both instances in a stable group", lambda: _group_members(secured) == 2, timeout=60)
        assert _metric(secured.url, "pykafkad_schema_registry_primary", "admin") == 1
        assert _metric(front.url, "pykafkad_schema_registry_primary") == 0
        body = {"schema": json.dumps({"type": "record", "name": "Forwarded", "fields": []})}
        path = "/subjects/orders-forwarded/versions"
        status, answer, _ = secured.call(path, None, method="POST", body=body, url=front.url)
        assert (status, answer.get("error_code")) == (401, 40101), answer
        status, answer, _ = secured.call(path, "bob", method="POST", body=body, url=front.url)
        assert (status, answer["error_code"]) == (403, 40301), answer
        status, answer, _ = secured.call(path, "admin", method="POST", body=body, url=front.url)
        assert status == 200, answer
        assert secured.call(f"/schemas/ids/{answer['id']}", "admin")[0] == 200
        assert _metric(front.url, "pykafkad_schema_registry_forwarded_requests_total") == 3
    finally:
        assert front.stop() == 0

