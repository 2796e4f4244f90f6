"""Retention and the log start offset, proven with real clients against a broker process.

Time retention (`retention.ms`, broker-wide `log.retention.minutes` over `log.retention.hours`),
size retention (`retention.bytes`, broker-wide `log.retention.bytes`), rolling by age
(`log.roll.ms`, topic `segment.ms`), all run by the housekeeping pass every
`log.retention.check.interval.ms`.  Whole closed segments go, oldest first, while a consumer
keeps reading; ListOffsets earliest follows the log start; consumers that fell behind it get
OFFSET_OUT_OF_RANGE and `auto.offset.reset` behaves as with Kafka; DeleteRecords (AdminClient
and Kafka's `kafka-delete-records` tool) moves the log start on demand.  Every outcome is
checked on disk (segment files) as well as through the clients.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient
from kafka.errors import OffsetOutOfRangeError

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import (
    CLIENT_TIMEOUT_S,
    ConfluentClient,
    KafkaPythonClient,
    Rec,
    create_topic,
    now_ms,
    unique_topic,
)
from compat_tests.java_tools import run_tool
from compat_tests.storage_support import (
    alter_topic,
    describe_topic,
    ensure_running,
    log_bytes,
    module_broker,
    segment_bases,
    wait_for,
)

SEGMENT_BYTES = 8192
BROKER_RETENTION_BYTES = 65536
OVERRIDES = {
    "log.retention.check.interval.ms": "250",
    # Below log.segment.bytes' 1 MiB minimum: the test-only key.
    "internal.log.segment.bytes": str(SEGMENT_BYTES),
    # log.retention.minutes wins over log.retention.hours, as in Kafka: broker-wide retention is 60 s.
    "log.retention.hours": "1000",
    "log.retention.minutes": "1",
    "log.retention.bytes": str(BROKER_RETENTION_BYTES),
    "log.roll.ms": "2000",
}
KEEP_ALL = {"retention.ms": "-1", "retention.bytes": "-1"}


@pytest.fixture(scope="module")
def _retention_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from module_broker(tmp_path_factory, "retention-broker", OVERRIDES)


@pytest.fixture
def rb(_retention_broker: BrokerProcess) -> BrokerProcess:
    return ensure_running(_retention_broker)


def _records(n: int, tag: str, *, ts: int | None = None, size: int = 100) -> list[Rec]:
    return [Rec(f"{tag}-{i:06d}-".encode().ljust(size, b"x"), f"k{i}".encode(), timestamp=ts) for i in range(n)]


def _fill(b: BrokerProcess, topic: str, n: int, tag: str, **kw: Any) -> list[int]:
    cfg = {"linger.ms": 20, "batch.size": 1200}  # batches must fit the small test segments
    offsets = ConfluentClient(b.bootstrap).produce(topic, _records(n, tag, **kw), **cfg)
    assert offsets == list(range(offsets[0], offsets[0] + n)), "offsets not contiguous"
    return offsets


def test_time_retention_per_topic_and_broker_wide(rb: BrokerProcess) -> None:
    """Records 10 minutes old: gone under topic retention.ms=5 min and under the broker-wide
    log.retention.minutes=1 (which beats log.retention.hours=1000); kept under retention.ms=20 min
    and under retention.ms=-1.  The log start offset moves to the log end; the partition stays usable."""
    old = now_ms() - 600_000
    topics = {
        "topic5min": ({"retention.ms": "300000", "retention.bytes": "-1"}, True),
        "brokerwide": ({}, True),
        "topic20min": ({"retention.ms": "1200000", "retention.bytes": "-1"}, False),
        "forever": (KEEP_ALL, False),
    }
    names = {label: unique_topic(f"ret-{label.lower()}") for label in topics}
    for label, (config, _) in topics.items():
        create_topic(rb.bootstrap, names[label], config=config)
        _fill(rb, names[label], 300, label, ts=old)
    assert describe_topic(rb.bootstrap, names["brokerwide"])["retention.ms"].value == "60000"

    client = ConfluentClient(rb.bootstrap)
    for label, (_, deleted) in topics.items():
        if deleted:
            wait_for(f"{label}: log start reaches the log end", lambda t=names[label]: client.offsets(t) == (300, 300))
            # Whole segments only: every segment file with data below 300 is gone.
            assert segment_bases(rb.partition_dir(names[label])) == [300]
    for label, (_, deleted) in topics.items():
        if not deleted:
            assert client.offsets(names[label]) == (0, 300), label
            assert segment_bases(rb.partition_dir(names[label]))[0] == 0, label
            assert len(segment_bases(rb.partition_dir(names[label]))) > 2, label

    # The emptied partition keeps its offsets: new records continue at 300.
    t = names["topic5min"]
    assert client.produce(t, [Rec(b"fresh", b"k")]) == [300]
    assert [g.offset for g in KafkaPythonClient(rb.bootstrap).consume(t, 0, "earliest", 1)] == [300]


def test_size_retention_while_a_consumer_keeps_reading(rb: BrokerProcess) -> None:
    """retention.bytes=32768 with 8 KiB segments: while ~300 KB are produced, retention keeps
    deleting the oldest closed segments and a consumer reading along sees every record, in order."""
    topic = unique_topic("ret-bytes")
    create_topic(rb.bootstrap, topic, config={"retention.bytes": "32768", "retention.ms": "-1"})
    part = rb.partition_dir(topic)
    seen: list[tuple[int, bytes]] = []
    errors: list[Any] = []
    stop = threading.Event()

    def consume() -> None:
        consumer = ConfluentClient(rb.bootstrap).consumer()
        try:
            consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
            while not stop.is_set():
                m = consumer.poll(0.2)
                if m is None:
                    continue
                if m.error() is not None:
                    if m.error().code() != confluent_kafka.KafkaError._PARTITION_EOF:
                        errors.append(m.error())
                    continue
                seen.append((m.offset(), m.value()))
        finally:
            consumer.close()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    starts: set[int] = set()
    total = 0
    try:
        for chunk in range(30):
            total = _fill(rb, topic, 100, f"c{chunk}")[-1] + 1
            wait_for("the consumer catches up", lambda end=total: seen and seen[-1][0] == end - 1, timeout=30)
            starts.add(segment_bases(part)[0])
    finally:
        stop.set()
        reader.join(timeout=10)
    assert not errors, errors[:5]
    assert [o for o, _ in seen] == list(range(total)), "the consumer missed or repeated records"
    assert all(v.startswith(f"c{o // 100}-{o % 100:06d}-".encode()) for o, v in seen)

    wait_for("retention trims to retention.bytes", lambda: log_bytes(part) <= 32768 + SEGMENT_BYTES)
    lo, hi = ConfluentClient(rb.bootstrap).offsets(topic)
    bases = segment_bases(part)
    assert hi == total and lo == bases[0] > 0
    assert len(starts) > 3, f"log start moved only through {sorted(starts)} while producing"
    # ListOffsets earliest through kafka-python and a consumer with auto.offset.reset=earliest agree.
    assert KafkaPythonClient(rb.bootstrap).offsets(topic) == (lo, hi)
    assert KafkaPythonClient(rb.bootstrap).consume(topic, 0, "earliest", 1)[0].offset == lo


def test_broker_wide_retention_bytes(rb: BrokerProcess) -> None:
    """A topic without overrides takes log.retention.bytes=65536 from the broker."""
    topic = unique_topic("ret-brokerbytes")
    create_topic(rb.bootstrap, topic)
    _fill(rb, topic, 2000, "b")
    part = rb.partition_dir(topic)
    wait_for("broker-wide retention.bytes applies", lambda: log_bytes(part) <= BROKER_RETENTION_BYTES + SEGMENT_BYTES)
    assert log_bytes(part) >= BROKER_RETENTION_BYTES - SEGMENT_BYTES, "deleted more than needed"
    lo, hi = ConfluentClient(rb.bootstrap).offsets(topic)
    assert hi == 2000 and lo == segment_bases(part)[0] > 0
    got = ConfluentClient(rb.bootstrap).consume(topic, 0, "earliest", hi - lo)
    assert [g.offset for g in got] == list(range(lo, hi))


def test_segments_roll_by_age(rb: BrokerProcess) -> None:
    """log.roll.ms=2000 rolls a topic's active segment by age; a topic with segment.ms=10 min does not."""
    rolling, steady = unique_topic("roll-broker"), unique_topic("roll-topic")
    create_topic(rb.bootstrap, rolling, config=KEEP_ALL)
    create_topic(rb.bootstrap, steady, config={**KEEP_ALL, "segment.ms": "600000"})
    client = ConfluentClient(rb.bootstrap)
    sent = 0

    def rolled_twice() -> bool:
        nonlocal sent
        for t in (rolling, steady):
            client.produce(t, [Rec(f"r{sent}".encode(), b"k")])
        sent += 1
        return len(segment_bases(rb.partition_dir(rolling))) >= 3

    wait_for("log.roll.ms rolls the active segment twice", rolled_twice, timeout=60, interval=0.5)
    assert segment_bases(rb.partition_dir(steady)) == [0]
    assert client.offsets(rolling) == (0, sent)
    got = KafkaPythonClient(rb.bootstrap).consume(rolling, 0, "earliest", sent)
    assert [g.value for g in got] == [f"r{i}".encode() for i in range(sent)]


def _behind_topic(b: BrokerProcess) -> tuple[str, int, int]:
    """A topic whose first segments retention deleted: (name, log start, log end)."""
    topic = unique_topic("ret-behind")
    create_topic(b.bootstrap, topic, config={**KEEP_ALL, "internal.segment.bytes": "2048"})
    _fill(b, topic, 200, "old")
    assert ConfluentClient(b.bootstrap).offsets(topic) == (0, 200)
    alter_topic(b.bootstrap, topic, {"retention.bytes": "4096"})  # applied live
    lo, hi = wait_for("retention.bytes set live deletes segments",
                      lambda: (r := ConfluentClient(b.bootstrap).offsets(topic))[0] > 0 and r)
    assert lo == segment_bases(b.partition_dir(topic))[0]
    return topic, lo, hi


def test_consumer_behind_log_start(rb: BrokerProcess) -> None:
    """A consumer positioned below the log start gets OFFSET_OUT_OF_RANGE; auto.offset.reset decides."""
    topic, lo, hi = _behind_topic(rb)

    # confluent-kafka: auto.offset.reset=error surfaces the error, earliest and latest reset.
    consumer = ConfluentClient(rb.bootstrap).consumer(**{"auto.offset.reset": "error"})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        err = wait_for("librdkafka reports the out-of-range offset", lambda: (m := consumer.poll(0.5)) and m.error())
    finally:
        consumer.close()
    assert err.code() == confluent_kafka.KafkaError._AUTO_OFFSET_RESET, err
    assert "out of range" in err.str().lower(), err.str()

    got = ConfluentClient(rb.bootstrap).consume(topic, 0, 0, 1, **{"auto.offset.reset": "earliest"})
    assert got[0].offset == lo

    # latest: nothing old is delivered, only what is produced after the reset (produced until one arrives).
    consumer = ConfluentClient(rb.bootstrap).consumer(**{"auto.offset.reset": "latest"})
    producer = ConfluentClient(rb.bootstrap)
    sent = 0
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])

        def next_new() -> Any:
            nonlocal sent
            m = consumer.poll(0.5)
            if m is None or m.error() is not None:
                producer.produce(topic, [Rec(f"after-reset-{sent}".encode(), b"k")])
                sent += 1
                return None
            return m

        m = wait_for("a record produced after the reset arrives", next_new)
        assert m.offset() >= hi and m.value().startswith(b"after-reset-"), (m.offset(), m.value())
    finally:
        consumer.close()
    hi += sent

    # kafka-python: auto_offset_reset='none' raises OffsetOutOfRangeError; earliest resets to the log start.
    kp = KafkaPythonClient(rb.bootstrap)
    from kafka import TopicPartition

    consumer = kp.consumer(auto_offset_reset="none")
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        with pytest.raises(OffsetOutOfRangeError):
            wait_for("kafka-python raises OffsetOutOfRangeError", lambda: consumer.poll(timeout_ms=500), timeout=30)
    finally:
        consumer.close()
    assert kp.consume(topic, 0, 0, 1, auto_offset_reset="earliest")[0].offset == lo
    consumer = kp.consumer(auto_offset_reset="latest")
    try:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        wait_for("kafka-python resets to the log end",
                 lambda: (consumer.poll(timeout_ms=200), consumer.position(tp))[1] == hi)
        ConfluentClient(rb.bootstrap).produce(topic, [Rec(b"for-kafka-python", b"k")])
        batch = wait_for("the new record arrives", lambda: consumer.poll(timeout_ms=500))
        [m] = [m for recs in batch.values() for m in recs]
        assert (m.offset, m.value) == (hi, b"for-kafka-python")
    finally:
        consumer.close()


def test_delete_records_admin_and_tool(rb: BrokerProcess, tmp_path: Path) -> None:
    """DeleteRecords through confluent's AdminClient and Kafka's kafka-delete-records tool."""
    topic = unique_topic("delrec")
    create_topic(rb.bootstrap, topic, config={**KEEP_ALL, "internal.segment.bytes": "2048"})
    _fill(rb, topic, 100, "d")
    part = rb.partition_dir(topic)
    assert segment_bases(part)[0] == 0

    admin = AdminClient({"bootstrap.servers": rb.bootstrap})
    futures = admin.delete_records([confluent_kafka.TopicPartition(topic, 0, 30)], request_timeout=CLIENT_TIMEOUT_S)
    [result] = futures.values()
    assert result.result(CLIENT_TIMEOUT_S).low_watermark == 30
    assert ConfluentClient(rb.bootstrap).offsets(topic) == (30, 100)
    assert KafkaPythonClient(rb.bootstrap).offsets(topic) == (30, 100)
    bases = segment_bases(part)
    assert bases[0] <= 30 and (len(bases) == 1 or bases[1] > 30), f"segments below 30 not deleted: {bases}"
    got = ConfluentClient(rb.bootstrap).consume(topic, 0, "earliest", 70)
    assert [g.offset for g in got] == list(range(30, 100))

    def tool(offset: int) -> str:
        spec = tmp_path / f"delete-{offset}.json"
        spec.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": offset}]}))
        out = run_tool("kafka-delete-records", ["--bootstrap-server", rb.bootstrap, "--offset-json-file", str(spec)])
        return out.stdout

    out = tool(60)
    assert "low_watermark: 60" in out, out
    assert ConfluentClient(rb.bootstrap).offsets(topic) == (60, 100)
    assert segment_bases(part)[0] <= 60 < (segment_bases(part) + [101])[1]
    # -1 means the high watermark: everything goes.
    assert "low_watermark: 100" in tool(-1)
    assert ConfluentClient(rb.bootstrap).offsets(topic) == (100, 100)
    assert segment_bases(part)[-1] <= 100

    # Beyond the log end: OFFSET_OUT_OF_RANGE, nothing changes.
    [bad] = admin.delete_records([confluent_kafka.TopicPartition(topic, 0, 500)],
                                 request_timeout=CLIENT_TIMEOUT_S).values()
    with pytest.raises(confluent_kafka.KafkaException) as exc:
        bad.result(CLIENT_TIMEOUT_S)
    assert exc.value.args[0].code() == confluent_kafka.KafkaError.OFFSET_OUT_OF_RANGE
    assert ConfluentClient(rb.bootstrap).offsets(topic) == (100, 100)
    # The log start offset is persisted: it survives a restart.
    rb.restart()
    assert ConfluentClient(rb.bootstrap).offsets(topic) == (100, 100)
