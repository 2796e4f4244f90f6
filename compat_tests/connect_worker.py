"""A Kafka Connect worker in distributed mode (``connect-runtime`` 4.3.1, unchanged) as a subprocess,
driven through its REST API as an operator would.

Connect and MirrorMaker 2 run from a directory of their own (env JAVA_CONNECT_LIB, laid out by
``make java-deps`` from compat_tests/java/connect/pom.xml, which says why 4.3.1 and not 4.4.0)."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import free_port
from compat_tests.java_tools import java_executable, stop_java

CONNECT_DISTRIBUTED = "org.apache.kafka.connect.cli.ConnectDistributed"
MIRROR_MAKER = "org.apache.kafka.connect.mirror.MirrorMaker"
READY_TIMEOUT_S = 120.0


def connect_classpath() -> str:
    lib = os.environ.get("JAVA_CONNECT_LIB")
    if not lib or not any(Path(lib).glob("connect-runtime-*.jar")):
        pytest.fail(f"env JAVA_CONNECT_LIB={lib!r} holds no connect-runtime jar: run `make java-deps` and the "
                    "tests as `make test-python` does (JAVA_CONNECT_LIB=<repo>/.cache/java/connect-<version>)",
                    pytrace=False)
    return str(Path(lib) / "*")


def java_process(main_class: str, args: list[str], stderr: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [java_executable(), "-Xmx384m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
         "-Dlog4j2.level=WARN", "-cp", connect_classpath(), main_class, *args],
        stdout=stderr.open("ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


class ConnectWorker:
    """One distributed worker of group ``group``; its internal topics are named after the group."""

    def __init__(self, bootstrap: str, group: str, work: Path, name: str, replication_factor: int = 1) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.stderr_path = work / f"connect-{name}.log"
        self.config_path = work / f"connect-{name}.properties"
        settings = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets",
            "status.storage.topic": f"{group}-status",
            "config.storage.replication.factor": str(replication_factor),
            "offset.storage.replication.factor": str(replication_factor),
            "status.storage.replication.factor": str(replication_factor),
            "offset.flush.interval.ms": "500",
            "listeners": self.url,
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(self.port),
            # A worker that left is given up on quickly, so its work moves within the test.
            "scheduled.rebalance.max.delay.ms": "3000",
        }
        self.config_path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ConnectWorker:
        self.proc = java_process(CONNECT_DISTRIBUTED, [str(self.config_path)], self.stderr_path)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            assert self.proc.poll() is None, f"connect worker {self.name} exited\n{self.log_tail()}"
            try:
                with urllib.request.urlopen(self.url + "/connectors", timeout=5):
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, f"connect worker {self.name} never served REST\n{self.log_tail()}"
            time.sleep(0.2)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One REST call; tried again while the workers' group is rebalancing (Connect answers 409,
        or holds the request) until READY_TIMEOUT_S.  A connector created by an earlier try that
        timed out counts as created."""
        data = None if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            req = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=30) as response:
                    text = response.read()
                return json.loads(text) if text else {}
            except urllib.error.HTTPError as e:
                detail = e.read().decode(errors="replace")
                if e.code == 409 and "already exists" in detail:
                    return {}
                if e.code != 409 or time.monotonic() > deadline:
                    raise AssertionError(f"{method} {path}: HTTP {e.code} {detail}\n{self.log_tail()}") from None
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.5)

    def log_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-4000:] if self.stderr_path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            stop_java(self.proc)
