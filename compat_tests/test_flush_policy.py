"""Flush policy: when the broker fsyncs, observed with strace on the broker process.

With `log.flush.interval.messages=1` (the documented fsync-per-batch setting) every produced
batch is followed by an fsync; a topic's `flush.messages` overrides the broker value; with
Kafka's default (unbounded) nothing is fsynced per batch; `flush.ms` makes the periodic flush
fsync a partition whose unflushed data is old enough.  Sources show in DescribeConfigs, and
records acknowledged under fsync-per-batch survive kill -9.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import ConfigSource

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, Rec, create_topic, unique_topic
from compat_tests.storage_support import describe_topic, wait_for

BATCHES = 30
SYNC_CALLS = ("fsync(", "fdatasync(")


class FsyncCounter:
    """strace -f on a running broker, counting fsync/fdatasync calls."""

    def __init__(self, pid: int, out: Path) -> None:
        if shutil.which("strace") is None:
            pytest.fail("strace is not installed: run `make system-deps`", pytrace=False)
        self.out = out
        self.proc = subprocess.Popen(
            ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", str(out), "-p", str(pid)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        status = Path(f"/proc/{pid}/status")
        wait_for("strace attaches to the broker", lambda: self.proc.poll() is not None or any(
            line.startswith("TracerPid:") and line.split()[1] != "0" for line in status.read_text().splitlines()),
            timeout=15, interval=0.05)
        if self.proc.poll() is not None:
            pytest.fail(f"strace could not attach: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")

    def count(self) -> int:
        try:
            text = self.out.read_text()
        except FileNotFoundError:
            return 0
        return sum(1 for line in text.splitlines() if any(c in line for c in SYNC_CALLS))

    def stop(self) -> int:
        self.proc.terminate()
        self.proc.wait(timeout=15)
        return self.count()


def _fsyncs_during(b: BrokerProcess, out: Path, action: Callable[[], Any]) -> int:
    assert b.proc is not None
    counter = FsyncCounter(b.proc.pid, out)
    try:
        action()  # flush.messages fsyncs on append, before the produce is acknowledged
    except BaseException:
        counter.stop()
        raise
    return counter.stop()


def _one_batch_each(b: BrokerProcess, topic: str, n: int = BATCHES) -> None:
    """`n` produce requests of one record each, one after the other (acks=all)."""
    client = ConfluentClient(b.bootstrap)
    producer = client.producer(**{"linger.ms": 0, "acks": "all"})
    failures: list[Any] = []
    for i in range(n):
        producer.produce(topic, value=f"b{i}".encode(), key=b"k",
                         on_delivery=lambda err, msg: failures.append(err) if err else None)
        assert producer.flush(30) == 0
    assert not failures, failures[:3]


@pytest.mark.compat_timeout(180)
def test_flush_messages_and_flush_ms(broker_factory: Any, tmp_path: Path) -> None:
    b = broker_factory("flush", {"auto.create.topics.enable": "false", "log.flush.interval.messages": "1"})
    every, lazy, timed = unique_topic("flush-every"), unique_topic("flush-lazy"), unique_topic("flush-timed")
    create_topic(b.bootstrap, every)
    create_topic(b.bootstrap, lazy, config={"flush.messages": "1000000"})
    create_topic(b.bootstrap, timed, config={"flush.messages": "1000000", "flush.ms": "500"})
    entry = describe_topic(b.bootstrap, every)["flush.messages"]
    assert (entry.value, entry.source) == ("1", ConfigSource.STATIC_BROKER_CONFIG.value)
    assert describe_topic(b.bootstrap, lazy)["flush.messages"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value

    per_batch = _fsyncs_during(b, tmp_path / "every.txt", lambda: _one_batch_each(b, every))
    overridden = _fsyncs_during(b, tmp_path / "lazy.txt", lambda: _one_batch_each(b, lazy))
    print(f"fsync calls for {BATCHES} batches: log.flush.interval.messages=1 -> {per_batch}, "
          f"topic flush.messages=1000000 -> {overridden}")
    assert per_batch >= BATCHES, f"only {per_batch} fsyncs for {BATCHES} batches with flush.messages=1"
    assert overridden < BATCHES // 3, f"{overridden} fsyncs for {BATCHES} batches with flush.messages=1000000"

    # flush.ms: the periodic flush fsyncs data older than 500 ms, without any further produce.
    assert b.proc is not None
    ConfluentClient(b.bootstrap).produce(timed, [Rec(b"timed", b"k")])
    counter = FsyncCounter(b.proc.pid, tmp_path / "timed.txt")
    try:
        wait_for("flush.ms=500 triggers an fsync", counter.count, timeout=30)
    finally:
        counter.stop()

    # Acknowledged under fsync-per-batch: all there after kill -9.
    b.kill9()
    b.start()
    assert ConfluentClient(b.bootstrap).offsets(every) == (0, BATCHES)


def test_default_does_not_fsync_per_batch(broker_factory: Any, tmp_path: Path) -> None:
    """Kafka's default: flushing is left to the OS (log.flush.interval.messages unbounded)."""
    b = broker_factory("noflush", {"auto.create.topics.enable": "false"})
    topic = unique_topic("flush-default")
    create_topic(b.bootstrap, topic)
    entry = describe_topic(b.bootstrap, topic)["flush.messages"]
    assert entry.value == str(2**63 - 1) and entry.source == ConfigSource.DEFAULT_CONFIG.value
    fsyncs = _fsyncs_during(b, tmp_path / "default.txt", lambda: _one_batch_each(b, topic))
    print(f"fsync calls for {BATCHES} batches with Kafka's default flush settings: {fsyncs}")
    assert fsyncs < BATCHES // 3
