"""Committed offsets: they resume a group after its consumers restart and after kill -9 of the broker.

The group "hello" is used on a dedicated broker because Java's "hello".hashCode() is 99162322,
so Kafka keeps its offsets in __consumer_offsets partition 99162322 % 50 = 22; the test checks
the records land there.  Offset commit metadata strings round-trip through OffsetFetch, before
and after the restart.
"""

from __future__ import annotations

import time

import confluent_kafka
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from compat_tests.clients import create_topic, unique_topic
from compat_tests.groups_support import GROUP_BROKER_OVERRIDES, produce_spread

PARTITIONS = 3
GROUP = "hello"
GROUP_PARTITION = 22


def _kafka_python_consumer(bootstrap: str, topic: str) -> KafkaConsumer:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP, auto_offset_reset="earliest",
                      enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500)
    c.subscribe([topic])
    return c


def _poll_kafka_python(c: KafkaConsumer, want: int, timeout: float = 30) -> list[tuple[int, int]]:
    got: list[tuple[int, int]] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        for tp, records in c.poll(timeout_ms=200).items():
            got += [(tp.partition, r.offset) for r in records]
    return got


@pytest.mark.compat_timeout(150)
def test_offsets_resume_after_consumer_restart_and_broker_kill9(broker_factory) -> None:
    broker = broker_factory("groups-offsets", GROUP_BROKER_OVERRIDES)
    topic = unique_topic("grp-offsets")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce_spread(broker.bootstrap, topic, 30, PARTITIONS, "a")

    # 1. kafka-python consumes everything and commits offsets with metadata strings.
    c = _kafka_python_consumer(broker.bootstrap, topic)
    got = _poll_kafka_python(c, 30)
    assert sorted(got) == [(p, o) for p in range(PARTITIONS) for o in range(10)]
    c.commit({TopicPartition(topic, p): OffsetAndMetadata(10, f"meta-{p}", -1) for p in range(PARTITIONS)})
    c.close()
    assert broker.partition_dir("__consumer_offsets", GROUP_PARTITION).joinpath(
        "00000000000000000000.log").stat().st_size > 0

    # 2. confluent-kafka in the same group resumes at 10, sees the metadata, and commits 20.
    produce_spread(broker.bootstrap, topic, 30, PARTITIONS, "b")
    cc = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUP,
                                   "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                   "session.timeout.ms": 6000})
    try:
        committed = cc.committed([confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=15)
        assert [(tp.offset, tp.metadata) for tp in committed] == [(10, f"meta-{p}") for p in range(PARTITIONS)]
        cc.subscribe([topic])
        seen: list[tuple[int, int]] = []
        deadline = time.monotonic() + 30
        while len(seen) < 30 and time.monotonic() < deadline:
            m = cc.poll(0.2)
            if m is not None and not m.error():
                seen.append((m.partition(), m.offset()))
        assert sorted(seen) == [(p, o) for p in range(PARTITIONS) for o in range(10, 20)]
        cc.commit(offsets=[confluent_kafka.TopicPartition(topic, p, 20, metadata=f"after-{p}")
                           for p in range(PARTITIONS)], asynchronous=False)
    finally:
        cc.close()

    # 3. kill -9 the broker; after the restart the group resumes at 20 with its metadata.
    broker.restart(graceful=False)
    produce_spread(broker.bootstrap, topic, 15, PARTITIONS, "c")
    c = _kafka_python_consumer(broker.bootstrap, topic)
    try:
        for p in range(PARTITIONS):
            meta = c.committed(TopicPartition(topic, p), metadata=True)
            # confluent-kafka (librdkafka) sends the metadata string with its C terminator; it round-trips as sent.
            assert (meta.offset, meta.metadata.rstrip("\x00")) == (20, f"after-{p}")
        got = _poll_kafka_python(c, 15)
        assert sorted(got) == [(p, o) for p in range(PARTITIONS) for o in range(20, 25)]
    finally:
        c.close()
