"""The wheel of ``make wheel``, installed into a fresh virtualenv outside the checkout: its
``pykafkad serve`` starts with the Rust extension from the wheel, a client round trip works, and
SIGTERM stops it cleanly; the systemd unit of deploy/systemd checks out against it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from compat_tests.loopback_ports import free_port

REPO_ROOT = Path(__file__).resolve().parent.parent
UNIT = REPO_ROOT / "deploy" / "systemd" / "pykafkad.service"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv, outside the checkout, with the wheel installed; its bin/ directory."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(["make", "-s", "wheel", f"WHEEL_DIR={work / 'dist'}"], cwd=REPO_ROOT, check=True,
                   capture_output=True, timeout=1200)
    [wheel] = (work / "dist").glob("pykafkad-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, capture_output=True,
                   timeout=900)
    return venv / "bin"


def _clean_environment() -> dict[str, str]:
    # Nothing may come from the checkout: no PYTHONPATH, and the process runs elsewhere.
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_the_installed_wheel_serves_a_round_trip(installed: Path, tmp_path: Path) -> None:
    where = subprocess.run([str(installed / "python"), "-c",
                            "import pykafkad, pykafkad._rust_log as r; print(pykafkad.__file__); print(r.__file__)"],
                           cwd=tmp_path, env=_clean_environment(), capture_output=True, text=True, check=True)
    assert all(line.startswith(str(installed.parent)) for line in where.stdout.split()), where.stdout

    port = free_port()
    stderr = open(tmp_path / "broker.log", "w")
    # No config file: Kafka's defaults, but for the offsets topic's replication factor (3), which one
    # broker cannot give its consumer group.
    overrides = [f"listeners=PLAINTEXT://127.0.0.1:{port}", f"log.dirs={tmp_path / 'data'}",
                 "offsets.topic.replication.factor=1"]
    broker = subprocess.Popen([str(installed / "pykafkad"), "serve", *(f"--override={o}" for o in overrides)],
                              cwd=tmp_path, env=_clean_environment(), stdout=stderr, stderr=stderr)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert broker.poll() is None, (tmp_path / "broker.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "broker.log").read_text()
                time.sleep(0.1)
        bootstrap = f"127.0.0.1:{port}"
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        for i in range(20):
            producer.produce("wheel", f"r{i}".encode())
        assert producer.flush(60) == 0
        del producer
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wheel", "auto.offset.reset": "earliest"})
        consumer.subscribe(["wheel"])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < 20 and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.append(message.value())
        consumer.close()
        assert sorted(got) == sorted(f"r{i}".encode() for i in range(20))
    finally:
        broker.send_signal(signal.SIGTERM)
        code = broker.wait(timeout=60)
        stderr.close()
    assert code == 0, (tmp_path / "broker.log").read_text()


def test_the_systemd_unit_checks_out(installed: Path, tmp_path: Path) -> None:
    # The unit as shipped names /opt/pykafkad; here it names the wheel's virtualenv instead.
    unit = tmp_path / "pykafkad.service"
    unit.write_text(UNIT.read_text().replace("/opt/pykafkad/bin/pykafkad", str(installed / "pykafkad")))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "ExecStart=" + str(installed / "pykafkad") in unit.read_text()
