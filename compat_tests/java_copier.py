"""Kafka's own TransactionalMessageCopier (the Java clients' transactional producer and consumer,
from Kafka's system tests), run against a broker: it copies a partition in transactions, commits
the consumed offsets in each, and aborts some at random, then rewinds to its last committed
offset and copies again.  ``run_transactional_copier`` checks that every record arrived exactly
once for read_committed consumers.
"""

from __future__ import annotations

import subprocess
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.java_tools import java_classpath, java_executable
from pykafkad.kafka_tools import JVM_OPTIONS


def run_transactional_copier(broker: BrokerProcess, records: int, transaction_size: int) -> str:
    """Copy ``records`` records between two new one-partition topics of ``broker``; the
    transactional id."""
    source, target = unique_topic("copier-in"), unique_topic("copier-out")
    create_topic(broker.bootstrap, source, 1)
    create_topic(broker.bootstrap, target, 1)
    return copy_exactly_once(broker.bootstrap, source, target, 1, records, transaction_size)


def copy_exactly_once(bootstrap: str, source: str, target: str, target_partitions: int, records: int,
                      transaction_size: int) -> str:
    """Write ``records`` records to partition 0 of ``source``, copy them to ``target`` with random
    aborts, and assert that read_committed consumers see each exactly once; the transactional id."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(records):
        producer.produce(source, str(i).encode(), partition=0)
    assert producer.flush(60) == 0
    txn_id = f"copier-{source}"
    done = subprocess.run(
        [java_executable(), "-cp", java_classpath(), *JVM_OPTIONS, "org.apache.kafka.tools.TransactionalMessageCopier",
         "--broker-list", bootstrap, "--input-topic", source, "--input-partition", "0",
         "--output-topic", target, "--consumer-group", f"copier-{source}", "--transactional-id", txn_id,
         "--transaction-size", str(transaction_size), "--enable-random-aborts", "--use-group-metadata"],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{target}",
                       "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        reader.assign([TopicPartition(target, p, 0) for p in range(target_partitions)])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < records and time.monotonic() < deadline:
            msg = reader.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        for _ in range(5):
            msg = reader.poll(0.3)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
    finally:
        reader.close()
    assert sorted(got, key=int) == [str(i).encode() for i in range(records)]
    return txn_id
