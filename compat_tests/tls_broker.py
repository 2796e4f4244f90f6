"""A broker with a PLAINTEXT and an SSL listener (Kafka's ``ssl.keystore.type=PEM``) and the files
its clients need: the TLS tests, and the zero-copy fetch tests that read the same records through the
copying (TLS) path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.certificates import Authority


class TlsBroker:
    """A broker with PLAINTEXT and SSL listeners, and the files its clients need."""

    def __init__(self, work: Path, client_auth: str = "requested", name: str | None = None) -> None:
        self.ca = Authority(work / "pki")
        # An encrypted key, opened with ssl.key.password (PEM key stores have no store password).
        _, _, keystore = self.ca.issue("broker", password=b"not-to-be-shown")
        self.ssl_port = free_port()
        self.broker = BrokerProcess(work / "logs", name=name or f"tls-{client_auth}")
        listeners = f"PLAINTEXT://127.0.0.1:{self.broker.port},SSL://127.0.0.1:{self.ssl_port}"
        self.broker.overrides.update({
            "listeners": listeners, "advertised.listeners": listeners, "auto.create.topics.enable": "false",
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca.cert_path),
            "ssl.client.auth": client_auth, "ssl.key.password": "not-to-be-shown",
        })

    @property
    def ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ssl_port}"

    def confluent(self, **extra: Any) -> dict[str, Any]:
        return {"bootstrap.servers": self.ssl_bootstrap, "security.protocol": "SSL",
                "ssl.ca.location": str(self.ca.cert_path), **extra}
