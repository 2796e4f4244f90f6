"""TLS listeners: one broker with a PLAINTEXT and an SSL listener (Kafka's ``ssl.keystore.type=PEM``),
and stock clients over SSL with the settings they use against Kafka: confluent-kafka, kafka-python,
kcat and Kafka's own Java tools.  Each listener advertises its own endpoints.  Mutual TLS
(``ssl.client.auth=required``) admits a client certificate from the trusted CA only.  A plaintext
client on the TLS port, garbage, a silent half-open handshake and a certificate from an unknown CA
are refused, and the broker goes on serving everyone else.  A bad TLS setting stops the broker at
start with one line."""

from __future__ import annotations

import select
import shutil
import socket
import struct
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer

from compat_tests.broker_process import BrokerError, BrokerProcess, free_port
from compat_tests.certificates import Authority
from compat_tests.clients import create_topic, roundtrip
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from compat_tests.tls_broker import TlsBroker


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsBroker]:
    server = TlsBroker(tmp_path_factory.mktemp("tls"))
    server.broker.start()
    yield server
    server.broker.close()


def test_confluent_kafka_over_ssl_sees_the_ssl_endpoints(tls: TlsBroker) -> None:
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    create_topic(tls.broker.bootstrap, topic)
    metadata = AdminClient(tls.confluent()).list_topics(timeout=30)
    assert [(b.host, b.port) for b in metadata.brokers.values()] == [("127.0.0.1", tls.ssl_port)]
    plain = AdminClient({"bootstrap.servers": tls.broker.bootstrap}).list_topics(timeout=30)
    assert [b.port for b in plain.brokers.values()] == [tls.broker.port]
    assert roundtrip(tls.confluent(), topic) == [f"c{n}".encode() for n in range(50)]


def test_kafka_python_over_ssl(tls: TlsBroker) -> None:
    topic = f"tls-kp-{uuid.uuid4().hex[:8]}"
    create_topic(tls.broker.bootstrap, topic)
    settings = {"bootstrap_servers": tls.ssl_bootstrap, "security_protocol": "SSL",
                "ssl_cafile": str(tls.ca.cert_path), "ssl_check_hostname": True}
    producer = KafkaProducer(acks="all", **settings)
    for n in range(30):
        producer.send(topic, f"k{n}".encode()).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20000, **settings)
    got = [m.value for _, m in zip(range(30), consumer, strict=False)]
    consumer.close()
    assert got == [f"k{n}".encode() for n in range(30)]


def test_kcat_over_ssl(tls: TlsBroker) -> None:
    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        pytest.fail("kcat is not installed: run `make system-deps`", pytrace=False)
    topic = f"tls-kcat-{uuid.uuid4().hex[:8]}"
    create_topic(tls.broker.bootstrap, topic)
    ssl_args = ["-b", tls.ssl_bootstrap, "-X", "security.protocol=ssl", "-X", f"ssl.ca.location={tls.ca.cert_path}"]
    subprocess.run([exe, *ssl_args, "-P", "-t", topic], input="one\ntwo\nthree\n", text=True, check=True,
                   timeout=60, capture_output=True)
    out = subprocess.run([exe, *ssl_args, "-C", "-t", topic, "-o", "beginning", "-c", "3", "-e"], text=True,
                         check=True, timeout=60, capture_output=True).stdout
    assert out.split() == ["one", "two", "three"]


def test_kafka_java_tools_over_ssl(tls: TlsBroker, tmp_path: Path) -> None:
    topic = f"tls-java-{uuid.uuid4().hex[:8]}"
    client = tmp_path / "client-ssl.properties"
    client.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={tls.ca.cert_path}\n")
    run_tool("kafka-topics", ["--bootstrap-server", tls.ssl_bootstrap, "--command-config", str(client), "--create",
                              "--topic", topic, "--partitions", "1"])
    run_tool("kafka-console-producer", ["--bootstrap-server", tls.ssl_bootstrap, "--command-config", str(client),
                                        "--topic", topic], stdin="alpha\nbeta\n")
    out = run_tool("kafka-console-consumer", ["--bootstrap-server", tls.ssl_bootstrap, "--command-config",
                                              str(client), "--topic", topic, "--from-beginning",
                                              "--max-messages", "2", "--timeout-ms", "30000"]).stdout
    assert out.split() == ["alpha", "beta"]


def test_bad_clients_are_refused_and_others_go_on(tls: TlsBroker, tmp_path: Path) -> None:
    topic = f"tls-bad-{uuid.uuid4().hex[:8]}"
    create_topic(tls.broker.bootstrap, topic)
    # A silent client that never finishes its handshake holds nobody else up.
    silent = socket.create_connection(("127.0.0.1", tls.ssl_port))
    # Garbage in place of a ClientHello: the connection is closed.
    with RawConnection(tls.ssl_port) as garbage:
        garbage.send(b"\x00\x00\x00\x10this is no tls")
        assert garbage.wait_closed()
    # A plaintext Kafka client on the TLS port gets no metadata.
    with pytest.raises(KafkaException):
        AdminClient({"bootstrap.servers": tls.ssl_bootstrap, "socket.timeout.ms": 3000}).list_topics(timeout=5)
    # A certificate from a CA the broker does not trust is refused (ssl.client.auth=requested checks one given).
    rogue = Authority(tmp_path / "rogue", "rogue")
    key, cert, _ = rogue.issue("intruder", client=True)
    with pytest.raises(KafkaException):
        AdminClient(tls.confluent(**{"ssl.key.location": str(key), "ssl.certificate.location": str(cert),
                                     "socket.timeout.ms": 3000})).list_topics(timeout=5)
    try:
        assert roundtrip(tls.confluent(), topic, 10) == [f"c{n}".encode() for n in range(10)]
    finally:
        silent.close()
    assert tls.broker.is_alive()


def test_mutual_tls_admits_only_certificates_of_the_trusted_ca(tmp_path: Path) -> None:
    server = TlsBroker(tmp_path, client_auth="required")
    server.broker.start()
    try:
        topic = f"mtls-{uuid.uuid4().hex[:8]}"
        create_topic(server.broker.bootstrap, topic)
        with pytest.raises(KafkaException):
            AdminClient(server.confluent(**{"socket.timeout.ms": 3000})).list_topics(timeout=5)
        key, cert, _ = server.ca.issue("app", client=True)
        with_cert = server.confluent(**{"ssl.key.location": str(key), "ssl.certificate.location": str(cert)})
        assert roundtrip(with_cert, topic, 10) == [f"c{n}".encode() for n in range(10)]
    finally:
        server.broker.close()


@pytest.mark.parametrize(("overrides", "message"), [
    ({"ssl.keystore.type": "JKS"}, "ssl.keystore.type=JKS: pykafkad reads PEM stores only; set ssl.keystore.type=PEM"),
    ({"ssl.keystore.location": "/nonexistent/keystore.pem"}, "ssl.keystore.location=/nonexistent/keystore.pem: "
                                                             "cannot load a PEM private key"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}, "sasl.enabled.mechanisms: GSSAPI not served; use PLAIN, "
                                                    "SCRAM-SHA-256, SCRAM-SHA-512"),
    ({"listeners": "INTERNAL://127.0.0.1:0"}, "no security protocol defined for listener INTERNAL"),
])
def test_a_bad_tls_setting_stops_the_start_with_one_line(tmp_path: Path, overrides: dict[str, str],
                                                         message: str) -> None:
    server = TlsBroker(tmp_path)
    server.broker.overrides.update(overrides)
    if "listeners" in overrides:
        server.broker.overrides["advertised.listeners"] = overrides["listeners"]
    with pytest.raises(BrokerError) as refused:
        server.broker.start(timeout=30)
    assert message in str(refused.value), str(refused.value)
    assert "Traceback" not in str(refused.value)


def test_describe_configs_hides_tls_secrets(tls: TlsBroker) -> None:
    out = run_tool("kafka-configs", ["--bootstrap-server", tls.broker.bootstrap, "--describe", "--entity-type",
                                     "brokers", "--entity-name", "1", "--all"]).stdout
    assert "ssl.key.password=null sensitive=true" in out, out
    assert "not-to-be-shown" not in out
    assert "ssl.keystore.type=PEM sensitive=false" in out and "ssl.client.auth=requested sensitive=false" in out


def test_connections_over_max_connections_per_ip_are_closed(tmp_path: Path) -> None:
    """``max.connections.per.ip`` and its overrides: a connection over the limit is closed at once,
    and one within it is served."""
    broker = BrokerProcess(tmp_path / "logs", {"max.connections.per.ip": "2",
                                               "max.connections.per.ip.overrides": "127.0.0.2:5"}, name="limited")
    broker.start()
    held: list[RawConnection] = []
    try:
        # Two connections that are served (each answers a request), so both are counted.  The start's
        # readiness probe may still count for an instant: a refused one is tried again.
        held = [_served_connection(broker.port) for _ in range(2)]
        with RawConnection(broker.port) as third:
            assert third.wait_closed()
        # Another address has its own (overridden) limit.
        extra = [socket.create_connection(("127.0.0.1", broker.port), source_address=("127.0.0.2", 0), timeout=15)
                 for _ in range(3)]
        api_versions_v0 = struct.pack(">ihhih", 10, 18, 0, 7, -1)
        for sock in extra:
            sock.sendall(api_versions_v0)
            assert len(sock.recv(4)) == 4, "a connection within 127.0.0.2's override was not served"
            sock.close()
        # A slot freed is usable again (once the broker has seen the close).
        held.pop().close()
        _served_connection(broker.port).close()
    finally:
        for sock in held:
            sock.close()
        broker.close()


def _served_connection(port: int) -> RawConnection:
    deadline = time.monotonic() + 15
    while True:
        conn = RawConnection(port)
        try:
            if conn.api_versions(3)[0] == 0:
                return conn
        except AssertionError:
            conn.close()
            assert time.monotonic() < deadline, "no connection was ever served"
            time.sleep(0.05)


def test_max_connections_holds_clients_back_but_not_the_inter_broker_listener(tmp_path: Path) -> None:
    """At ``max.connections`` the client listener stops accepting: a new client waits, unanswered,
    until a connection closes, while the inter-broker listener still takes connections."""
    client_port = free_port()
    broker = BrokerProcess(tmp_path / "logs", name="max-connections")
    listeners = f"PLAINTEXT://127.0.0.1:{broker.port},CLIENT://127.0.0.1:{client_port}"
    broker.overrides.update({"listeners": listeners, "advertised.listeners": listeners,
                             "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT",
                             "inter.broker.listener.name": "PLAINTEXT", "max.connections": "2"})
    broker.start()
    held: list[RawConnection] = []
    try:
        held = [_served_connection(client_port) for _ in range(2)]
        waiting = socket.create_connection(("127.0.0.1", client_port), timeout=15)
        waiting.sendall(struct.pack(">ihhih", 10, 18, 0, 7, -1))
        # Not accepted while two are held (the kernel's backlog keeps it).
        assert select.select([waiting], [], [], 1.0)[0] == []
        inter_broker = _served_connection(broker.port)
        inter_broker.close()
        held.pop().close()
        assert len(waiting.recv(4)) == 4, "the waiting client was not served once a slot was freed"
        waiting.close()
    finally:
        for conn in held:
            conn.close()
        broker.close()
