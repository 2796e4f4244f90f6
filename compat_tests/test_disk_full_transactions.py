"""A transaction whose Complete state meets a full disk completes once space returns (issue 28, found by
the fault injector's disk-full fault on a transaction coordinator).

A commit is three writes by the coordinator: PrepareCommit (then EndTxn is answered), the markers,
and CompleteCommit.  When the last one was refused by a full log dir, the coordinator gave up on it
(the write answered NOT_COORDINATOR, as Kafka maps a storage error), and the transactional id stayed
in PrepareCommit for good: every later request of the producer got CONCURRENT_TRANSACTIONS, and a
new producer with the same id could not start (InitProducerId answered the same), long after the
disk had room again.  Kafka takes a failed dir offline and moves the partition to a new coordinator,
which finishes the transaction; pykafkad keeps the dir and retries the write until it succeeds.

The broker's only log dir is a small tmpfs; ``internal.log.segment.bytes=200`` makes every state write
start a new segment, so a full filesystem refuses it for sure.  The broker's test-only
hold (env PYKAFKAD_TEST_HOLD_TXN_COMPLETION) keeps the Complete write waiting after the markers
while the test fills the disk, so the write that fails is that one.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.storage_support import mounted_small_fs, wait_for
from pykafkad.coordinator.transaction.coordinator import HOLD_COMPLETION_ENV

TIMEOUT_S = 30.0


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    yield from mounted_small_fs(tmp_path)


def fill(fs: Path) -> Path:
    """A file that takes every free byte of ``fs``."""
    filler = fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                continue
    finally:
        os.close(fd)
    return filler


def read_committed(bootstrap: str, topic: str, wanted: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex[:6]}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    try:
        def poll() -> bool:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
            return len(got) >= wanted
        wait_for(f"{wanted} committed records in {topic}", poll, TIMEOUT_S, interval=0)
    finally:
        consumer.close()
    return got


def test_a_transaction_completes_after_its_complete_state_met_a_full_disk(
        small_fs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hold = tmp_path / "hold-completion"
    monkeypatch.setenv(HOLD_COMPLETION_ENV, str(hold))
    broker = BrokerProcess(small_fs / "logs", {
        "auto.create.topics.enable": "false", "num.partitions": "1", "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1", "internal.log.segment.bytes": "200"},
        name="txn-disk-full")
    broker.stderr_path = tmp_path / "broker.stderr.log"  # off the filesystem it fills
    broker.start()
    try:
        topic = unique_topic("txn-full")
        create_topic(broker.bootstrap, topic)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "txn-disk-full",
                             "transaction.timeout.ms": 60000})
        producer.init_transactions(TIMEOUT_S)
        hold.touch()
        producer.begin_transaction()
        producer.produce(topic, b"first")
        producer.commit_transaction(TIMEOUT_S)  # answered after PrepareCommit
        assert read_committed(broker.bootstrap, topic, 1) == [b"first"]  # the markers are written
        filler = fill(small_fs)
        hold.unlink()
        wait_for("the CompleteCommit write refused by the full disk",
                 lambda: "transactional id txn-disk-full: state not written" in broker.stderr_text(), TIMEOUT_S)
        filler.unlink()
        producer.begin_transaction()
        producer.produce(topic, b"second")
        producer.commit_transaction(TIMEOUT_S)  # CONCURRENT_TRANSACTIONS until it timed out, before the fix
        assert read_committed(broker.bootstrap, topic, 2) == [b"first", b"second"]
        again = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "txn-disk-full"})
        again.init_transactions(TIMEOUT_S)  # a new producer with the id starts, fencing the first
    finally:
        broker.close()
