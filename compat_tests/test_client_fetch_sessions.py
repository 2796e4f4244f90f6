"""Consumers read through fetch sessions (KIP-227): Kafka's Java consumer on 500 partitions opens a
session on its first fetch and then sends only what changed.  The broker's
``kafka_server_fetchsessioncache_*`` gauges show its session holding all 500 partitions while it
waits, and records produced after that reach it through incremental fetches: every one, once, in
order per partition.  kafka-python's consumer does the same on 50.  (librdkafka's never opens a
session: its fetches are sessionless, epoch -1.)
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections import defaultdict
from subprocess import CompletedProcess

from compat_tests.broker_process import free_port
from compat_tests.clients import ConfluentClient, Rec, create_topic, unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.java_tools import run_tool

PARTITIONS = 500
PER_PARTITION = 4
SESSIONS = "kafka_server_fetchsessioncache_numincrementalfetchsessions"
CACHED = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached"


def _gauges(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        lines = answer.read().decode().splitlines()
    return {line.split()[0]: float(line.split()[1]) for line in lines
            if line.startswith((SESSIONS + " ", CACHED + " "))}


def test_a_java_consumer_on_500_partitions_reads_through_an_incremental_session(
        broker_factory: BrokerFactory) -> None:
    http_port = free_port()
    broker = broker_factory("client-sessions", {"metrics.listener": f"http://127.0.0.1:{http_port}"})
    topic = unique_topic("client-sessions")
    create_topic(broker.bootstrap, topic, partitions=PARTITIONS)
    total = PARTITIONS * PER_PARTITION
    done: list[CompletedProcess[str] | BaseException] = []

    def consume() -> None:
        try:
            done.append(run_tool("kafka-console-consumer", [
                "--bootstrap-server", broker.bootstrap, "--topic", topic, "--from-beginning",
                "--max-messages", str(total), "--timeout-ms", "90000",
                "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true"],
                timeout=180, check=False))
        except BaseException as e:  # noqa: BLE001 - raised again in the test's own thread
            done.append(e)

    consumer = threading.Thread(target=consume)
    consumer.start()
    try:
        deadline = time.monotonic() + 90
        while (seen := _gauges(http_port)) != {SESSIONS: 1.0, CACHED: float(PARTITIONS)}:
            assert consumer.is_alive(), f"the consumer ended before a session was seen: {done}"
            assert time.monotonic() < deadline, f"no session of {PARTITIONS} partitions: {seen}"
            time.sleep(0.1)
        ConfluentClient(broker.bootstrap).produce(topic=topic, records=[
            Rec(f"{n}".encode(), partition=n % PARTITIONS) for n in range(total)])
    finally:
        consumer.join(200)
    [result] = done
    if isinstance(result, BaseException):
        raise result
    assert result.returncode == 0, result.stderr[-4000:]
    offsets: dict[int, list[int]] = defaultdict(list)
    for line in result.stdout.splitlines():
        # Partition:12<TAB>Offset:3<TAB>value
        partition, offset, _ = line.split("\t", 2)
        offsets[int(partition.split(":")[1])].append(int(offset.split(":")[1]))
    assert offsets == {p: list(range(PER_PARTITION)) for p in range(PARTITIONS)}


KAFKA_PYTHON_PARTITIONS = 50


def test_a_kafka_python_consumer_reads_through_an_incremental_session(broker_factory: BrokerFactory) -> None:
    """kafka-python (``enable_incremental_fetch_sessions``, on by default) keeps one session of all
    its partitions, and records produced afterwards reach it through it, each once."""
    from kafka import KafkaConsumer, TopicPartition

    http_port = free_port()
    broker = broker_factory("kafka-python-sessions", {"metrics.listener": f"http://127.0.0.1:{http_port}"})
    topic = unique_topic("kafka-python-sessions")
    create_topic(broker.bootstrap, topic, partitions=KAFKA_PYTHON_PARTITIONS)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=200)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(KAFKA_PYTHON_PARTITIONS)])
        deadline = time.monotonic() + 60
        while (seen := _gauges(http_port)) != {SESSIONS: 1.0, CACHED: float(KAFKA_PYTHON_PARTITIONS)}:
            assert time.monotonic() < deadline, f"no session of {KAFKA_PYTHON_PARTITIONS} partitions: {seen}"
            assert not consumer.poll(timeout_ms=100), "records before any were produced"
        total = KAFKA_PYTHON_PARTITIONS * PER_PARTITION
        ConfluentClient(broker.bootstrap).produce(topic=topic, records=[
            Rec(f"{n}".encode(), partition=n % KAFKA_PYTHON_PARTITIONS) for n in range(total)])
        offsets: dict[int, list[int]] = defaultdict(list)
        while sum(len(o) for o in offsets.values()) < total:
            assert time.monotonic() < deadline + 60, f"read {dict(offsets)} of {total} records"
            for part, records in consumer.poll(timeout_ms=500).items():
                offsets[part.partition] += [record.offset for record in records]
        assert offsets == {p: list(range(PER_PARTITION)) for p in range(KAFKA_PYTHON_PARTITIONS)}
        assert _gauges(http_port) == {SESSIONS: 1.0, CACHED: float(KAFKA_PYTHON_PARTITIONS)}
    finally:
        consumer.close()
