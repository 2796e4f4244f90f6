"""Exactly-once consume-transform-produce with confluent-kafka: a worker reads a topic in a group,
writes a transformed copy and commits its consumed offsets in the same transaction
(``compat_tests/txn_copier.py``).  Killed -9 at random points and restarted, it still leaves every
input record in the output exactly once for read_committed consumers: the killed worker's open
transaction is aborted, output and offsets together, and the next one resumes from the offsets
its predecessors committed.  Kafka's own TransactionalMessageCopier (the Java clients) does the
same with random aborts.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
import uuid
from collections import Counter

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.broker_process import REPO_ROOT, BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.java_copier import run_transactional_copier

PARTITIONS = 3
RECORDS = 3000
KILLS = 3


class CommittedReader:
    """A read_committed consumer of the whole output, read as far as the test needs."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                                  "isolation.level": "read_committed", "enable.auto.commit": False})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        self.values: list[bytes] = []

    def read_until(self, count: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.values) < count:
            assert time.monotonic() < deadline, f"only {len(self.values)} of {count} records committed"
            msg = self.consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                self.values.append(msg.value())

    def drain(self) -> None:
        for _ in range(10):
            msg = self.consumer.poll(0.3)
            if msg is not None and msg.error() is None:
                self.values.append(msg.value())


def _worker(broker: BrokerProcess, source: str, target: str, group: str, txn_id: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "compat_tests.txn_copier", broker.bootstrap, source, target,
                             group, txn_id], cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.compat_timeout(300)
def test_a_worker_killed_at_random_points_copies_every_record_exactly_once(broker: BrokerProcess) -> None:
    source, target = unique_topic("eos-in"), unique_topic("eos-out")
    create_topic(broker.bootstrap, source, PARTITIONS)
    create_topic(broker.bootstrap, target, PARTITIONS)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(source, str(i).encode(), key=str(i).encode(), partition=i % PARTITIONS)
    assert producer.flush(60) == 0
    group, txn_id = f"eos-{source}", f"eos-{source}"
    reader = CommittedReader(broker.bootstrap, target)
    rng = random.Random(7)
    workers = []
    try:
        for kill in range(KILLS):
            # Everything the workers before committed is read first, so the progress waited for
            # below is this worker's own.
            reader.drain()
            worker = _worker(broker, source, target, group, txn_id)
            workers.append(worker)
            # Some progress of its own, then a kill at a random point of what follows.
            reader.read_until(len(reader.values) + 100, 120)
            time.sleep(rng.uniform(0.0, 0.3))
            worker.kill()
            worker.wait(10)
            assert len(reader.values) < RECORDS, f"done before kill {kill + 1}: raise RECORDS"
        worker = _worker(broker, source, target, group, txn_id)
        workers.append(worker)
        reader.read_until(RECORDS, 180)
        reader.drain()
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait(10)
        reader.consumer.close()
    counts = Counter(reader.values)
    assert not [v for v, n in counts.items() if n > 1], "records copied twice"
    assert set(counts) == {b"copy-%d" % i for i in range(RECORDS)}


@pytest.mark.compat_timeout(240)
def test_kafkas_transactional_message_copier_with_random_aborts_copies_exactly_once(
        broker: BrokerProcess) -> None:
    """The Java client's transactional producer and consumer, through Kafka's own system-test tool,
    in transactions of 50 records with random aborts (transaction version 2, as the shared broker
    finalizes it)."""
    run_transactional_copier(broker, records=2000, transaction_size=50)
