"""SASL listeners: PLAIN (users from the listener's JAAS config) and SCRAM-SHA-256/512 (users made
with ``kafka-configs --entity-type users --add-config 'SCRAM-SHA-256=[password=...]'``), on
SASL_PLAINTEXT and SASL_SSL, with stock clients' own settings: confluent-kafka, kafka-python, kcat
and Kafka's Java tools.  Wrong passwords, unknown users, a mechanism not enabled and a request
before authenticating are refused with Kafka's errors, and the broker goes on serving."""

from __future__ import annotations

import shutil
import struct
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.certificates import Authority
from compat_tests.clients import create_topic, roundtrip
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret" user_carol="carol-secret";')
SCRAM_USER, SCRAM_PASSWORD = "bob", "bob-secret"


class SaslBroker:
    def __init__(self, work: Path) -> None:
        self.ca = Authority(work / "pki")
        _, _, keystore = self.ca.issue("broker")
        self.broker = BrokerProcess(work / "logs", name="sasl")
        self.sasl_port, self.sasl_ssl_port = free_port(), free_port()
        listeners = (f"PLAINTEXT://127.0.0.1:{self.broker.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port},"
                     f"SASL_SSL://127.0.0.1:{self.sasl_ssl_port}")
        self.broker.overrides.update({
            "listeners": listeners, "advertised.listeners": listeners, "auto.create.topics.enable": "false",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
        })

    def confluent(self, mechanism: str, user: str, password: str, tls: bool = False, **extra: Any) -> dict[str, Any]:
        config = {"bootstrap.servers": f"127.0.0.1:{self.sasl_ssl_port if tls else self.sasl_port}",
                  "security.protocol": "SASL_SSL" if tls else "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                  "sasl.username": user, "sasl.password": password, **extra}
        if tls:
            config["ssl.ca.location"] = str(self.ca.cert_path)
        return config


@pytest.fixture(scope="module")
def sasl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslBroker]:
    server = SaslBroker(tmp_path_factory.mktemp("sasl"))
    server.broker.start()
    try:  # a setup step that fails must not leave the broker running after the session
        run_tool("kafka-configs", ["--bootstrap-server", server.broker.bootstrap, "--alter", "--entity-type",
                                   "users", "--entity-name", SCRAM_USER, "--add-config",
                                   f"SCRAM-SHA-256=[iterations=8192,password={SCRAM_PASSWORD}],"
                                   f"SCRAM-SHA-512=[password={SCRAM_PASSWORD}]"])
        yield server
    finally:
        server.broker.close()


@pytest.mark.parametrize(("mechanism", "user", "password", "tls"), [
    ("PLAIN", "alice", "alice-secret", False),
    ("SCRAM-SHA-256", SCRAM_USER, SCRAM_PASSWORD, False),
    ("SCRAM-SHA-512", SCRAM_USER, SCRAM_PASSWORD, False),
    ("PLAIN", "carol", "carol-secret", True),
    ("SCRAM-SHA-512", SCRAM_USER, SCRAM_PASSWORD, True),
])
def test_confluent_kafka_authenticates(sasl: SaslBroker, mechanism: str, user: str, password: str,
                                       tls: bool) -> None:
    topic = f"sasl-{uuid.uuid4().hex[:8]}"
    create_topic(sasl.broker.bootstrap, topic)
    config = sasl.confluent(mechanism, user, password, tls)
    brokers = AdminClient(config).list_topics(timeout=30).brokers
    assert [b.port for b in brokers.values()] == [sasl.sasl_ssl_port if tls else sasl.sasl_port]
    assert roundtrip(config, topic, 20, tag="s") == [f"s{n}".encode() for n in range(20)]


@pytest.mark.parametrize(("mechanism", "user", "password"), [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-256", SCRAM_USER, SCRAM_PASSWORD)])
def test_kafka_python_authenticates(sasl: SaslBroker, mechanism: str, user: str, password: str) -> None:
    topic = f"sasl-kp-{uuid.uuid4().hex[:8]}"
    create_topic(sasl.broker.bootstrap, topic)
    settings = {"bootstrap_servers": f"127.0.0.1:{sasl.sasl_port}", "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password}
    producer = KafkaProducer(acks="all", **settings)
    for n in range(10):
        producer.send(topic, f"k{n}".encode()).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20000, **settings)
    got = [m.value for _, m in zip(range(10), consumer, strict=False)]
    consumer.close()
    assert got == [f"k{n}".encode() for n in range(10)]


def test_kcat_with_plain(sasl: SaslBroker) -> None:
    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        pytest.fail("kcat is not installed: run `make system-deps`", pytrace=False)
    topic = f"sasl-kcat-{uuid.uuid4().hex[:8]}"
    create_topic(sasl.broker.bootstrap, topic)
    args = ["-b", f"127.0.0.1:{sasl.sasl_port}", "-X", "security.protocol=SASL_PLAINTEXT", "-X",
            "sasl.mechanism=PLAIN", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"]
    subprocess.run([exe, *args, "-P", "-t", topic], input="x\ny\n", text=True, check=True, timeout=60,
                   capture_output=True)
    out = subprocess.run([exe, *args, "-C", "-t", topic, "-o", "beginning", "-c", "2", "-e"], text=True,
                         check=True, timeout=60, capture_output=True).stdout
    assert out.split() == ["x", "y"]


def test_kafka_java_tools_with_scram(sasl: SaslBroker, tmp_path: Path) -> None:
    topic = f"sasl-java-{uuid.uuid4().hex[:8]}"
    client = tmp_path / "client-scram.properties"
    client.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                      f'username="{SCRAM_USER}" password="{SCRAM_PASSWORD}";\n')
    bootstrap = f"127.0.0.1:{sasl.sasl_port}"
    run_tool("kafka-topics", ["--bootstrap-server", bootstrap, "--command-config", str(client), "--create",
                              "--topic", topic, "--partitions", "1"])
    run_tool("kafka-console-producer", ["--bootstrap-server", bootstrap, "--command-config", str(client),
                                        "--topic", topic], stdin="one\ntwo\n")
    out = run_tool("kafka-console-consumer", ["--bootstrap-server", bootstrap, "--command-config", str(client),
                                              "--topic", topic, "--from-beginning", "--max-messages", "2",
                                              "--timeout-ms", "30000"]).stdout
    assert out.split() == ["one", "two"]


def _refused(config: dict[str, Any]) -> None:
    """librdkafka reports the broker's refusal as an authentication error (its ``error_cb``), at the
    first attempt; a request never gets through."""
    errors: list[KafkaError] = []
    admin = AdminClient({**config, "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        admin.poll(0.1)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=0.5)


def test_wrong_credentials_and_mechanisms_are_refused(sasl: SaslBroker) -> None:
    _refused(sasl.confluent("PLAIN", "alice", "wrong"))
    _refused(sasl.confluent("PLAIN", "mallory", "alice-secret"))
    _refused(sasl.confluent("SCRAM-SHA-256", SCRAM_USER, "wrong"))
    _refused(sasl.confluent("SCRAM-SHA-256", "nobody", SCRAM_PASSWORD))
    with RawConnection(sasl.sasl_port) as conn:
        answer = conn.request(17, 1, {"mechanism": "GSSAPI"})
    assert answer["error_code"] == 33 and answer["mechanisms"] == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    with RawConnection(sasl.sasl_port) as conn:
        assert conn.request(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        answer = conn.request(36, 2, {"auth_bytes": b"\x00alice\x00nope"})
    assert (answer["error_code"], answer["error_message"]) == (58, "Authentication failed: Invalid username or "
                                                                    "password")
    # Anything but ApiVersions and the SASL exchange before authenticating closes the connection.
    with RawConnection(sasl.sasl_port) as raw:
        body = struct.pack(">hhi", 3, 0, 1) + struct.pack(">h", -1) + struct.pack(">i", 0)
        raw.send(struct.pack(">i", len(body)) + body)
        assert raw.wait_closed()
    topic = f"sasl-ok-{uuid.uuid4().hex[:8]}"
    create_topic(sasl.broker.bootstrap, topic)
    assert roundtrip(sasl.confluent("PLAIN", "alice", "alice-secret"), topic, 5, tag="s") == [f"s{n}".encode()
                                                                                      for n in range(5)]
    assert sasl.broker.is_alive()


def test_scram_credentials_are_stored_as_kafka_stores_them(sasl: SaslBroker) -> None:
    with RawConnection(sasl.broker.port) as conn:
        answer = conn.request(50, 0, {"users": [{"name": SCRAM_USER}, {"name": "alice"}]})
    results = {r["user"]: r for r in answer["results"]}
    assert sorted((c["mechanism"], c["iterations"]) for c in results[SCRAM_USER]["credential_infos"]) == \
        [(1, 8192), (2, 4096)]
    assert results["alice"]["error_code"] == 91
    stored = (sasl.broker.log_dir / "pykafkad-cluster-metadata.json").read_text()
    assert SCRAM_PASSWORD not in stored and "stored_key=" in stored and "iterations=8192" in stored


def test_clients_re_authenticate_within_connections_max_reauth_ms(tmp_path: Path) -> None:
    """KIP-368: the session lifetime is told to the client, librdkafka re-authenticates on its
    connection before it ends, and a connection that does not is closed at its next request."""
    server = SaslBroker(tmp_path)
    server.broker.overrides["connections.max.reauth.ms"] = "1500"
    server.broker.start()
    try:
        topic = f"reauth-{uuid.uuid4().hex[:8]}"
        create_topic(server.broker.bootstrap, topic)
        with RawConnection(server.sasl_port) as conn:
            assert conn.request(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
            answer = conn.request(36, 2, {"auth_bytes": b"\x00alice\x00alice-secret"})
            assert (answer["error_code"], answer["session_lifetime_ms"]) == (0, 1500)
            deadline, closed = time.monotonic() + 15, False
            while not closed and time.monotonic() < deadline:
                try:
                    conn.request(3, 12, {"topics": []})
                except (OSError, AssertionError):
                    closed = True  # the broker closed it once the session expired
                time.sleep(0.2)
            assert closed, "the expired session was never closed"
        producer = Producer({**server.confluent("PLAIN", "alice", "alice-secret"), "acks": "all"})
        failures: list[str] = []
        deadline = time.monotonic() + 6
        sent = 0
        while time.monotonic() < deadline:
            producer.produce(topic, str(sent).encode(),
                             on_delivery=lambda err, _m: failures.append(str(err)) if err else None)
            sent += 1
            producer.poll(0.05)
        assert producer.flush(30) == 0 and not failures, failures[:3]
        assert "re-authenticated as User:alice with PLAIN" in server.broker.stderr_text()
    finally:
        server.broker.close()


def test_handshake_v0_takes_raw_tokens_and_reauthentication_keeps_the_principal(sasl: SaslBroker) -> None:
    """SaslHandshake v0: the PLAIN token follows as a bare frame and is answered by one (an empty
    token), after which Kafka requests are served.  On a v1 connection a second handshake
    re-authenticates (KIP-368), which must come out as the same principal."""
    with RawConnection(sasl.sasl_port) as conn:
        assert conn.request(17, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        token = b"\x00alice\x00alice-secret"
        conn.send(struct.pack(">i", len(token)) + token)
        assert conn.recv_frame() == b""
        assert conn.request(3, 12, {"topics": []})["brokers"], "no Metadata after a v0 exchange"
    with RawConnection(sasl.sasl_port) as conn:
        assert conn.request(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        assert conn.request(36, 2, {"auth_bytes": b"\x00alice\x00alice-secret"})["error_code"] == 0
        assert conn.request(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        answer = conn.request(36, 2, {"auth_bytes": b"\x00carol\x00carol-secret"})
        assert (answer["error_code"], answer["error_message"]) == (
            58, "Cannot change principals during re-authentication from User:alice: User:carol")
        assert conn.wait_closed()


def _scram_exchange(port: int, client_first: str, client_final: Any) -> tuple[dict[str, Any], str]:
    """SCRAM-SHA-256 on a new connection: the first message, then ``client_final(server_first)``;
    the broker's answer to the final message and the server-first message."""
    with RawConnection(port) as conn:
        assert conn.request(17, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
        first = conn.request(36, 2, {"auth_bytes": client_first.encode()})
        assert first["error_code"] == 0, first
        server_first = first["auth_bytes"].decode()
        answer = conn.request(36, 2, {"auth_bytes": client_final(server_first).encode()})
        if answer["error_code"] != 0:
            assert conn.wait_closed(), "a failed exchange must close the connection"
        return answer, server_first


def test_replayed_and_garbled_scram_exchanges_are_refused(sasl: SaslBroker) -> None:
    """A recorded SCRAM exchange replayed on a new connection fails (the broker's nonce is new each
    time, so the old proof does not match), as do garbage tokens and a proof for the wrong
    password; each failure closes only its connection."""
    from scramp import ScramClient

    client = ScramClient(["SCRAM-SHA-256"], SCRAM_USER, SCRAM_PASSWORD)
    recorded: dict[str, str] = {}

    def final(server_first: str) -> str:
        client.set_server_first(server_first)
        recorded["final"] = client.get_client_final()
        return recorded["final"]

    client_first = client.get_client_first()
    answer, _ = _scram_exchange(sasl.sasl_port, client_first, final)
    assert answer["error_code"] == 0 and answer["auth_bytes"].startswith(b"v=")
    replayed, server_first = _scram_exchange(sasl.sasl_port, client_first, lambda _first: recorded["final"])
    assert server_first and replayed["error_code"] == 58, replayed
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in replayed["error_message"]
    wrong = ScramClient(["SCRAM-SHA-256"], SCRAM_USER, "not-the-password")

    def wrong_final(first: str) -> str:
        wrong.set_server_first(first)
        return wrong.get_client_final()

    refused, _ = _scram_exchange(sasl.sasl_port, wrong.get_client_first(), wrong_final)
    assert refused["error_code"] == 58
    for garbage in (b"\xff\xfe not utf-8", b"n,,x=y", b""):
        with RawConnection(sasl.sasl_port) as conn:
            assert conn.request(17, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
            assert conn.request(36, 2, {"auth_bytes": garbage})["error_code"] == 58
            assert conn.wait_closed()
    topic = f"sasl-after-{uuid.uuid4().hex[:8]}"
    create_topic(sasl.broker.bootstrap, topic)
    config = sasl.confluent("SCRAM-SHA-256", SCRAM_USER, SCRAM_PASSWORD)
    assert roundtrip(config, topic, 5, tag="r") == [f"r{n}".encode() for n in range(5)]
    assert sasl.broker.is_alive()
