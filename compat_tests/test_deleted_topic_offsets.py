"""Deleting a topic removes its committed offsets from every group, as Kafka does.

Before, groups kept the offsets of a deleted topic: `kafka-consumer-groups --describe` failed with
UnknownTopicOrPartitionException, and a group resumed a topic re-created under the same name at
the stale offset, silently skipping its first records.  Here the re-created topic always holds
more records than the stale offset, so a stale resume would skip records rather than fall back
to `auto.offset.reset` by OFFSET_OUT_OF_RANGE.  The removal is written to `__consumer_offsets`
as tombstones, so it holds after kill -9 and a restart too; a group left with no offsets and no
members is Dead, so `--list` no longer shows it.
"""

from __future__ import annotations

import json
import time

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer
from kafka import TopicPartition as KpTopicPartition

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import CLIENT_TIMEOUT_S, create_topic, unique_topic
from compat_tests.groups_support import GROUP_BROKER_OVERRIDES, produce_spread, wait_until
from compat_tests.java_tools import run_tool

PARTITIONS = 2


def _read_confluent(bootstrap: str, group: str, topics: list[str], want: int) -> list[tuple[str, int, int, bytes]]:
    """Subscribe in ``group``, read ``want`` records (topic, partition, offset, value), commit, leave."""
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False, "session.timeout.ms": 6000})
    got: list[tuple[str, int, int, bytes]] = []
    try:
        c.subscribe(topics)
        deadline = time.monotonic() + 30
        while len(got) < want and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append((m.topic(), m.partition(), m.offset(), m.value()))
        if got:
            c.commit(asynchronous=False)
    finally:
        c.close()
    return got


def _read_kafka_python(bootstrap: str, group: str, topic: str, want: int) -> list[tuple[int, int, bytes]]:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500)
    got: list[tuple[int, int, bytes]] = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(got) < want and time.monotonic() < deadline:
            for tp, records in c.poll(timeout_ms=200).items():
                got += [(tp.partition, r.offset, r.value) for r in records]
        if got:
            c.commit()
    finally:
        c.close()
    return got


def _committed_confluent(bootstrap: str, group: str, topic: str) -> list[int]:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = c.committed([confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=15)
        return [tp.offset for tp in tps]
    finally:
        c.close()


def _committed_kafka_python(bootstrap: str, group: str, topic: str) -> list[int | None]:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return [c.committed(KpTopicPartition(topic, p)) for p in range(PARTITIONS)]
    finally:
        c.close()


def _delete_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic], operation_timeout=CLIENT_TIMEOUT_S)[topic].result(timeout=CLIENT_TIMEOUT_S)
    wait_until(lambda: topic not in admin.list_topics(timeout=10).topics, 30, f"{topic} still listed")


def _groups_tool(bootstrap: str, *args: str) -> str:
    return run_tool("kafka-consumer-groups", ["--bootstrap-server", bootstrap, *args]).stdout


def _describe_rows(output: str) -> list[list[str]]:
    """The table rows of `--describe` (GROUP TOPIC PARTITION CURRENT-OFFSET ...), header excluded."""
    rows = [line.split() for line in output.splitlines() if line.strip()]
    return [r for r in rows if len(r) >= 6 and r[0] != "GROUP"]


def _check_groups_after_delete(broker: BrokerProcess, deleted: str, kept: str, both: str, only_deleted: str) -> None:
    """`both` committed on `deleted` and `kept`; `only_deleted` only on `deleted`."""
    rows = _describe_rows(_groups_tool(broker.bootstrap, "--describe", "--group", both))
    assert {(r[0], r[1], r[2], r[3]) for r in rows} == {(both, kept, "0", "5")}, rows
    rows = _describe_rows(_groups_tool(broker.bootstrap, "--describe", "--all-groups"))
    assert rows and not [r for r in rows if r[1] == deleted], rows
    listed = _groups_tool(broker.bootstrap, "--list").split()
    assert both in listed and only_deleted not in listed, listed


def _groups_with_offsets(bootstrap: str) -> tuple[str, str, str, str]:
    """A topic to delete (10 records per partition) and one to keep (5); a librdkafka group that
    read and committed both, a kafka-python group that read and committed the first only.
    Returns (topic, kept, librdkafka group, kafka-python group)."""
    topic, kept = unique_topic("deleted-offsets"), unique_topic("kept-offsets")
    librdkafka_group, kafka_python_group = unique_topic("g-librdkafka"), unique_topic("g-kafka-python")
    create_topic(bootstrap, topic, PARTITIONS)
    create_topic(bootstrap, kept, 1)
    produce_spread(bootstrap, topic, 10 * PARTITIONS, PARTITIONS, "first")
    produce_spread(bootstrap, kept, 5, 1, "kept")
    assert len(_read_confluent(bootstrap, librdkafka_group, [topic, kept], 25)) == 25
    assert len(_read_kafka_python(bootstrap, kafka_python_group, topic, 20)) == 20
    return topic, kept, librdkafka_group, kafka_python_group


@pytest.mark.compat_timeout(240)
def test_deleted_topic_offsets_are_removed_and_stay_removed_after_kill9(broker_factory) -> None:
    broker = broker_factory("deleted-offsets", GROUP_BROKER_OVERRIDES)
    b = broker.bootstrap
    topic, kept, librdkafka_group, kafka_python_group = _groups_with_offsets(b)
    assert _committed_confluent(b, librdkafka_group, topic) == [10] * PARTITIONS

    for generation in ("second", "third"):
        _delete_topic(b, topic)
        _check_groups_after_delete(broker, topic, kept, librdkafka_group, kafka_python_group)
        if generation == "third":
            # The removal was written as tombstones: a kill -9 and restart does not bring it back.
            broker.restart(graceful=False)
            _check_groups_after_delete(broker, topic, kept, librdkafka_group, kafka_python_group)

        # The topic comes back under the same name, with more records than the stale offset.
        per_partition = 15 if generation == "second" else 20
        create_topic(b, topic, PARTITIONS)
        produce_spread(b, topic, per_partition * PARTITIONS, PARTITIONS, generation)
        assert _committed_confluent(b, librdkafka_group, topic) == [confluent_kafka.OFFSET_INVALID] * PARTITIONS
        assert _committed_kafka_python(b, kafka_python_group, topic) == [None] * PARTITIONS

        # Each group reads the new topic from auto.offset.reset (earliest): every record, from 0.
        want = {(p, o) for p in range(PARTITIONS) for o in range(per_partition)}
        got = _read_confluent(b, librdkafka_group, [topic], len(want))
        assert {(p, o) for _, p, o, _ in got} == want
        assert all(v.startswith(generation.encode()) for _, _, _, v in got)
        got_kp = _read_kafka_python(b, kafka_python_group, topic, len(want))
        assert {(p, o) for p, o, _ in got_kp} == want
        assert _committed_confluent(b, librdkafka_group, topic) == [per_partition] * PARTITIONS


@pytest.mark.compat_timeout(180)
def test_offsets_left_by_a_crash_during_delete_are_removed_at_start(broker_factory) -> None:
    """A crash after the deletion reached the metadata but before the tombstones were written
    leaves the metadata without the topic and the offsets still in `__consumer_offsets`; the
    next start removes them.  That on-disk state is made here by editing the stopped broker's
    metadata file, exactly as such a crash leaves it."""
    broker = broker_factory("crashed-delete", GROUP_BROKER_OVERRIDES)
    topic, kept, group, only_deleted = _groups_with_offsets(broker.bootstrap)
    broker.kill9()

    metadata_file = broker.log_dir / "pykafkad-cluster-metadata.json"
    document = json.loads(metadata_file.read_text())
    gone = (f"/brokers/topics/{topic}", f"/config/topics/{topic}")
    document["znodes"] = {path: node for path, node in document["znodes"].items()
                          if not any(path == g or path.startswith(g + "/") for g in gone)}
    metadata_file.write_text(json.dumps(document))

    broker.start()
    _check_groups_after_delete(broker, topic, kept, group, only_deleted)
    broker.restart(graceful=False)
    _check_groups_after_delete(broker, topic, kept, group, only_deleted)
