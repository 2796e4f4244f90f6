"""``make cluster``: the command its recipe runs (read from ``make -n cluster``, so this cannot go
stale), with the same configs, started as a developer starts it; three brokers come up on ZooKeeper,
a real client produces and consumes through them, and Ctrl-C (SIGINT) stops everything cleanly:
exit status 0, every broker stopped by itself, no process left, every port free again.

The configs bind fixed ports (2181, 9092-9094); the test moves them all by one offset
(``--port-offset``) into a range below the kernel's ephemeral ports, where no other test binds,
and runs in its own directory with ``--data`` naming a directory there, where the brokers' log dirs
and ZooKeeper's data must land (not where the configs' relative paths point from the working
directory).
"""

from __future__ import annotations

import os
import random
import shlex
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from compat_tests.broker_process import REPO_ROOT

CONFIGS = REPO_ROOT / "configs" / "cluster"
# configs/cluster's ports: ZooKeeper's and the three brokers'.
BASE_PORTS = (2181, 9092, 9093, 9094)
START_DEADLINE_S = 120.0
STOP_DEADLINE_S = 180.0


def recipe() -> list[str]:
    """The command ``make cluster`` runs after its prerequisites, with repo paths made absolute."""
    out = subprocess.run(["make", "-s", "-n", "cluster"], cwd=REPO_ROOT, capture_output=True, text=True,
                         check=True).stdout
    line = next(line for line in out.splitlines() if "pykafkad.dev_cluster" in line)
    return [str(REPO_ROOT / arg) if (REPO_ROOT / arg).exists() and not arg.startswith("-") else arg
            for arg in shlex.split(line)]


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def port_offset() -> int:
    """An offset that puts every port of the configs on a free port between 4000 and 20000: below
    the ports ``loopback_ports`` hands the other tests under two workers, and the kernel's."""
    for _ in range(50):
        offset = random.randrange(2000, 10800)
        if all(_free(p + offset) for p in BASE_PORTS):
            return offset
    pytest.fail("no free block of ports for the cluster between 4000 and 20000")


def processes_mentioning(text: str) -> list[str]:
    """Command lines of running processes that contain ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


@pytest.mark.cluster_timeout(420)
def test_make_cluster_starts_serves_and_stops(tmp_path: Path) -> None:
    offset = port_offset()
    bootstrap = ",".join(f"127.0.0.1:{p + offset}" for p in BASE_PORTS[1:])
    output = tmp_path / "make-cluster.out"
    with open(output, "wb") as out:
        # --data elsewhere than the configs' relative paths say: everything the cluster writes goes there.
        launcher = subprocess.Popen([*recipe(), "--port-offset", str(offset), "--data", "elsewhere"], cwd=tmp_path,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
    data = tmp_path / "elsewhere"

    def report() -> str:
        logs = "".join(f"\n--- {log.name} ---\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                       for log in sorted(data.glob("*.log")))
        return f"--- make cluster output ---\n{output.read_text(errors='replace')}{logs}"

    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        deadline = time.monotonic() + START_DEADLINE_S
        brokers: set[int] = set()
        while brokers != {1, 2, 3}:
            assert launcher.poll() is None, f"make cluster exited with {launcher.returncode}\n{report()}"
            assert time.monotonic() < deadline, f"Metadata never listed brokers 1, 2, 3 (got {brokers})\n{report()}"
            try:
                brokers = set(admin.list_topics(timeout=2).brokers)
            except Exception:  # noqa: BLE001 - KafkaException while the brokers come up; asked again
                brokers = set()

        # ZooKeeper and the brokers name their configs' copies under tmp_path: the check for
        # processes left behind sees them.
        assert len(processes_mentioning(str(tmp_path.resolve()))) == 4, processes_mentioning(str(tmp_path.resolve()))

        topic = f"make-cluster-{uuid.uuid4().hex[:8]}"
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
        errors: list[str] = []
        values = [f"record-{i}".encode() for i in range(100)]
        for value in values:
            producer.produce(topic, value, on_delivery=lambda err, _msg: errors.append(str(err)) if err else None)
        assert producer.flush(60) == 0 and not errors, f"{errors}\n{report()}"

        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}",
                             "auto.offset.reset": "earliest"})
        got: list[bytes] = []
        try:
            consumer.subscribe([topic])
            deadline = time.monotonic() + 90
            while len(got) < len(values) and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is not None and msg.error() is None:
                    got.append(msg.value())
        finally:
            consumer.close()
        assert sorted(got) == sorted(values), f"read {len(got)} of {len(values)}\n{report()}"

        # Ctrl-C: the launcher stops each broker (controlled shutdown), then ZooKeeper.
        launcher.send_signal(signal.SIGINT)
        status = launcher.wait(STOP_DEADLINE_S)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        # Whatever the outcome, nothing this test started may outlive it (the brokers' and
        # ZooKeeper's command lines name their configs, copied under tmp_path).
        left = processes_mentioning(str(tmp_path.resolve()))
        for line in left:
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)

    assert status == 0, f"make cluster exited with {status}\n{report()}"
    text = output.read_text()
    for name in ("broker-3", "broker-2", "broker-1", "zookeeper"):
        assert f"stopping {name} ..." in text, text
    for n in (1, 2, 3):
        assert "pykafkad stopped" in (data / f"broker-{n}.log").read_text(errors="replace"), report()
    assert left == [], f"processes left behind: {left}"
    # The brokers' log dirs and ZooKeeper's data are under --data, not where the configs' relative
    # paths would put them from the working directory.
    assert not (tmp_path / "data").exists(), sorted(str(p) for p in (tmp_path / "data").rglob("*"))
    for n in (1, 2, 3):
        assert (data / f"broker-{n}" / "meta.properties").exists(), sorted(str(p) for p in data.iterdir())
    assert (data / "zookeeper" / "version-2").is_dir(), sorted(str(p) for p in data.iterdir())
    taken = [p + offset for p in BASE_PORTS if _listening(p + offset)]
    assert taken == [], f"ports still listened on after the stop: {taken}"
