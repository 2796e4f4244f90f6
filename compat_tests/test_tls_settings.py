"""The TLS keys that were accepted and ignored: ``ssl.protocol`` and the store passwords.

PEM stores have no store password: Kafka's DefaultSslEngineFactory refuses ``ssl.keystore.password``
and ``ssl.truststore.password`` with them, and so does pykafkad, with Kafka's words.  An encrypted PEM
private key is opened with ``ssl.key.password`` (Kafka's meaning); without it the broker says so
instead of asking for a pass phrase on the terminal.  ``ssl.protocol`` is Kafka's SSLContext protocol:
checked at start, and, as a Kafka 4.4.0 broker was seen to do by hand (a listener with
``ssl.protocol=TLSv1.2`` still negotiates TLS 1.3), it leaves the listener's versions to
``ssl.enabled.protocols``; on the client side, ``TLSv1.2`` keeps connections at TLS 1.2 at most, as
Kafka's Java client shows here against a listener that speaks TLS 1.3 only.
"""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerError, BrokerProcess, free_port
from compat_tests.certificates import Authority
from compat_tests.clients import create_topic, roundtrip, unique_topic
from compat_tests.java_tools import run_tool
from pykafkad.config import build_config
from pykafkad.network.tls import client_context


class _SslBroker:
    def __init__(self, work: Path, password: bytes | None = None, **overrides: str) -> None:
        self.ca = Authority(work / "pki")
        _, _, self.keystore = self.ca.issue("broker", password=password)
        self.ssl_port = free_port()
        self.broker = BrokerProcess(work / "logs", name="tls-settings")
        listeners = f"PLAINTEXT://127.0.0.1:{self.broker.port},SSL://127.0.0.1:{self.ssl_port}"
        self.broker.overrides.update({"listeners": listeners, "advertised.listeners": listeners,
                                      "ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.keystore),
                                      **overrides})

    def refusal(self) -> str:
        """The one line the broker stopped with."""
        with pytest.raises(BrokerError) as refused:
            self.broker.start(timeout=30)
        lines = [line for line in self.broker.stderr_text().splitlines() if line.startswith("pykafkad:")]
        assert len(lines) == 1 and "Traceback" not in str(refused.value), str(refused.value)
        return lines[0]

    def handshake(self, context: ssl.SSLContext) -> str | None:
        """The TLS version ``context`` gets from the SSL listener, or None if the handshake fails."""
        try:
            with (socket.create_connection(("127.0.0.1", self.ssl_port), timeout=10) as raw,
                  context.wrap_socket(raw, server_hostname="127.0.0.1") as tls):
                return tls.version()
        except (ssl.SSLError, OSError):
            return None


@pytest.mark.parametrize(("overrides", "line"), [
    ({"ssl.keystore.password": "secret"},
     "pykafkad: cannot start: ssl.keystore.password: SSL key store password cannot be specified with PEM format, "
     "only key password may be specified"),
    ({"ssl.truststore.password": "secret", "ssl.truststore.type": "PEM", "ssl.truststore.location": "{ca}"},
     "pykafkad: cannot start: ssl.truststore.password: SSL trust store password cannot be specified for PEM "
     "format."),
    ({"ssl.truststore.password": "secret"},
     "pykafkad: cannot start: ssl.truststore.password: SSL trust store is not specified, but trust store "
     "password is specified."),
])
def test_store_passwords_are_refused_with_pem_stores_as_kafka_refuses_them(
        tmp_path: Path, overrides: dict[str, str], line: str) -> None:
    server = _SslBroker(tmp_path)
    server.broker.overrides.update({k: v.replace("{ca}", str(server.ca.cert_path)) for k, v in overrides.items()})
    assert server.refusal() == line


def test_an_encrypted_key_opens_with_ssl_key_password(tmp_path: Path) -> None:
    server = _SslBroker(tmp_path, password=b"open-sesame", **{"ssl.key.password": "open-sesame"})
    server.broker.start()
    try:
        topic = unique_topic("encrypted-key")
        create_topic(server.broker.bootstrap, topic)
        client = {"bootstrap.servers": f"127.0.0.1:{server.ssl_port}", "security.protocol": "SSL",
                  "ssl.ca.location": str(server.ca.cert_path)}
        assert roundtrip(client, topic, 5) == [f"c{n}".encode() for n in range(5)]
    finally:
        server.broker.close()


def test_an_encrypted_key_without_ssl_key_password_is_one_line(tmp_path: Path) -> None:
    server = _SslBroker(tmp_path, password=b"open-sesame")
    assert server.refusal() == (f"pykafkad: cannot start: ssl.keystore.location={server.keystore}: the private key "
                                "is encrypted; set ssl.key.password")


def test_an_unknown_ssl_protocol_stops_the_start(tmp_path: Path) -> None:
    server = _SslBroker(tmp_path, **{"ssl.protocol": "TLSv1.9"})
    with pytest.raises(BrokerError):
        server.broker.start(timeout=30)
    assert ("pykafkad: bad configuration: Invalid value TLSv1.9 for configuration ssl.protocol: TLSv1.9 SSLContext "
            "not available; use TLSv1.3, TLSv1.2, TLS") in server.broker.stderr_text().splitlines()


def _inter_broker_context(ca: Path, **settings: str) -> ssl.SSLContext:
    """The context this broker would connect to another broker's SSL listener with."""
    return client_context(build_config({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca),
                                        **settings}))


def test_ssl_protocol_tls12_on_the_listener_still_accepts_tls13_as_kafka(tmp_path: Path) -> None:
    server = _SslBroker(tmp_path, **{"ssl.protocol": "TLSv1.2"})
    server.broker.start()
    try:
        only_13 = ssl.create_default_context(cafile=str(server.ca.cert_path))
        only_13.minimum_version = ssl.TLSVersion.TLSv1_3
        assert server.handshake(only_13) == "TLSv1.3"
        # This broker's own links to others: TLS 1.2 at most, whatever ssl.enabled.protocols allows.
        assert server.handshake(_inter_broker_context(server.ca.cert_path, **{"ssl.protocol": "TLSv1.2"})) == \
            "TLSv1.2"
        assert server.handshake(_inter_broker_context(server.ca.cert_path)) == "TLSv1.3"
    finally:
        server.broker.close()


def test_ssl_protocol_tls12_client_cannot_reach_a_tls13_only_listener_as_kafkas_java_client(tmp_path: Path) -> None:
    server = _SslBroker(tmp_path, **{"ssl.enabled.protocols": "TLSv1.3"})
    server.broker.start()
    try:
        ca = server.ca.cert_path
        assert server.handshake(_inter_broker_context(ca, **{"ssl.protocol": "TLSv1.2"})) is None
        assert server.handshake(_inter_broker_context(ca)) == "TLSv1.3"
        settings = tmp_path / "client.properties"
        settings.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={ca}\n"
                            "ssl.protocol=TLSv1.2\ndefault.api.timeout.ms=5000\nrequest.timeout.ms=3000\n")
        java = run_tool("kafka-broker-api-versions", ["--bootstrap-server", f"127.0.0.1:{server.ssl_port}",
                                                      "--command-config", str(settings)], check=False, timeout=120)
        assert java.returncode != 0, java.stdout
    finally:
        server.broker.close()
