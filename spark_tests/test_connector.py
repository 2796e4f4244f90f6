"""Spark's built-in Kafka source and sink (format("kafka"), spark-sql-kafka-0-10) against a
pykafkad process: batch reads (subscribe, subscribePattern, assign; offsets; timestamps;
headers), streaming reads (maxOffsetsPerTrigger, restart from checkpoint, failOnDataLoss) and
batch/streaming writes with the Java producer's defaults (idempotent, acks=all)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import REPO_ROOT, BrokerProcess
from spark_tests.kafka_data import (
    Rec,
    create_topic,
    delete_records_before,
    delete_topic,
    produce,
    read_all,
    unique_topic,
)

T0 = 1_700_000_000_000  # a fixed epoch-millisecond base for record timestamps


def kafka_read(spark: Any, broker: BrokerProcess, **options: str) -> list[Any]:
    """A batch read of the whole result, sorted by topic, partition, offset."""
    df = spark.read.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap).options(**options).load()
    return sorted(df.collect(), key=lambda r: (r.topic, r.partition, r.offset))


def seed(broker: BrokerProcess, topic: str, per_partition: int = 3, partitions: int = 2) -> list[Rec]:
    """`per_partition` records in each partition, timestamps T0 + 1000*i, a header on each."""
    create_topic(broker.bootstrap, topic, partitions)
    recs = [Rec(value=f"v{p}-{i}".encode(), key=f"k{p}-{i}".encode(), partition=p,
                headers=(("tag", f"t{i % 2}".encode()), ("n", str(i).encode())), timestamp=T0 + 1000 * i)
            for p in range(partitions) for i in range(per_partition)]
    return produce(broker.bootstrap, topic, recs)


def values(rows: list[Any]) -> list[str]:
    return [bytes(r.value).decode() for r in rows]


# -- batch reads ----------------------------------------------------------------------------------


def test_batch_subscribe_pattern_and_assign(spark: Any, broker: BrokerProcess) -> None:
    prefix = unique_topic("sp")
    a, b = f"{prefix}-a", f"{prefix}-b"
    seed(broker, a)
    seed(broker, b, per_partition=1)

    rows = kafka_read(spark, broker, subscribe=a)
    assert values(rows) == ["v0-0", "v0-1", "v0-2", "v1-0", "v1-1", "v1-2"]
    assert [(r.partition, r.offset) for r in rows] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert [bytes(r.key).decode() for r in rows][:2] == ["k0-0", "k0-1"]
    assert {r.timestampType for r in rows} == {0}  # CreateTime
    assert int(rows[1].timestamp.timestamp() * 1000) == T0 + 1000

    both = kafka_read(spark, broker, subscribePattern=f"{prefix}-.*")
    assert {(r.topic, len([x for x in both if x.topic == r.topic])) for r in both} == {(a, 6), (b, 2)}

    assigned = kafka_read(spark, broker, assign=json.dumps({a: [1], b: [0]}))
    assert [(r.topic, r.partition) for r in assigned] == [(a, 1), (a, 1), (a, 1), (b, 0)]


def test_batch_starting_and_ending_offsets(spark: Any, broker: BrokerProcess) -> None:
    topic = unique_topic("offsets")
    seed(broker, topic)
    assert len(kafka_read(spark, broker, subscribe=topic, startingOffsets="earliest", endingOffsets="latest")) == 6
    from pyspark.errors import IllegalArgumentException

    # Batch queries refuse latest as a start and earliest as an end, exactly as against Kafka.
    with pytest.raises(IllegalArgumentException, match="starting offset can't be latest"):
        kafka_read(spark, broker, subscribe=topic, startingOffsets="latest")
    with pytest.raises(IllegalArgumentException, match="ending offset can't be earliest"):
        kafka_read(spark, broker, subscribe=topic, endingOffsets="earliest")
    rows = kafka_read(spark, broker, subscribe=topic,
                      startingOffsets=json.dumps({topic: {"0": 1, "1": -2}}),
                      endingOffsets=json.dumps({topic: {"0": 2, "1": -1}}))
    assert values(rows) == ["v0-1", "v1-0", "v1-1", "v1-2"]


def test_batch_timestamps(spark: Any, broker: BrokerProcess) -> None:
    topic = unique_topic("ts")
    seed(broker, topic)
    rows = kafka_read(spark, broker, subscribe=topic, startingTimestamp=str(T0 + 1000))
    assert values(rows) == ["v0-1", "v0-2", "v1-1", "v1-2"]
    rows = kafka_read(spark, broker, subscribe=topic,
                      startingOffsetsByTimestamp=json.dumps({topic: {"0": T0 + 2000, "1": T0 - 1}}))
    assert values(rows) == ["v0-2", "v1-0", "v1-1", "v1-2"]
    rows = kafka_read(spark, broker, subscribe=topic, startingTimestamp=str(T0), endingTimestamp=str(T0 + 1000))
    assert values(rows) == ["v0-0", "v1-0"]


def test_batch_include_headers(spark: Any, broker: BrokerProcess) -> None:
    topic = unique_topic("headers")
    produce(broker.bootstrap, topic, [
        Rec(value=b"a", headers=(("h1", b"x"), ("h1", b"y"), ("empty", b""))),
        Rec(value=b"b"),
    ])
    rows = kafka_read(spark, broker, subscribe=topic, includeHeaders="true")
    assert [(h.key, bytes(h.value)) for h in rows[0].headers] == [("h1", b"x"), ("h1", b"y"), ("empty", b"")]
    assert not rows[1].headers
    assert "headers" not in kafka_read(spark, broker, subscribe=topic)[0].asDict()


# -- streaming reads ------------------------------------------------------------------------------


def run_available_now(df: Any, checkpoint: Path, sink_topic: str, broker: BrokerProcess) -> list[dict[str, Any]]:
    """Copy `df` to `sink_topic` with an availableNow trigger; returns the batches' progress."""
    query = (df.selectExpr("key", "value", "headers").writeStream.format("kafka")
             .option("kafka.bootstrap.servers", broker.bootstrap).option("topic", sink_topic)
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    assert query.awaitTermination(120), "availableNow query still running after 120 s"
    return [p for p in query.recentProgress if p["numInputRows"] > 0]


def stream_source(spark: Any, broker: BrokerProcess, topic: str, **options: str) -> Any:
    return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic).option("startingOffsets", "earliest").option("includeHeaders", "true")
            .options(**options).load())


def test_stream_max_offsets_per_trigger_and_restart(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    src, out = unique_topic("stream-src"), unique_topic("stream-out")
    create_topic(broker.bootstrap, src, 1)
    create_topic(broker.bootstrap, out, 1)
    produce(broker.bootstrap, src, [Rec(value=f"m{i}".encode(), key=b"k", headers=(("i", b"%d" % i),))
                                    for i in range(7)])
    ckpt = tmp_path / "ckpt"

    batches = run_available_now(stream_source(spark, broker, src, maxOffsetsPerTrigger="3"), ckpt, out, broker)
    assert [b["numInputRows"] for b in batches] == [3, 3, 1]
    assert json.loads(batches[-1]["sources"][0]["endOffset"]) == {src: {"0": 7}}

    produce(broker.bootstrap, src, [Rec(value=f"m{i}".encode(), key=b"k") for i in range(7, 12)])
    batches = run_available_now(stream_source(spark, broker, src, maxOffsetsPerTrigger="3"), ckpt, out, broker)
    assert [b["numInputRows"] for b in batches] == [3, 2]

    got = read_all(broker.bootstrap, out)
    assert [r.value for r in got] == [f"m{i}".encode() for i in range(12)]  # no loss, no duplicates
    assert got[3].headers == (("i", b"3"),) and got[3].key == b"k"


def test_stream_fail_on_data_loss(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    """Records the checkpoint expects are gone (topic deleted and recreated with fewer records):
    failOnDataLoss=true (the default) fails the query, false carries on with what is there."""
    src, out = unique_topic("loss-src"), unique_topic("loss-out")
    create_topic(broker.bootstrap, src, 1)
    produce(broker.bootstrap, src, [Rec(value=f"old{i}".encode()) for i in range(5)])
    ckpt_fail, ckpt_skip = tmp_path / "fail", tmp_path / "skip"
    for ckpt in (ckpt_fail, ckpt_skip):
        run_available_now(stream_source(spark, broker, src), ckpt, out, broker)

    delete_topic(broker.bootstrap, src)
    create_topic(broker.bootstrap, src, 1)
    produce(broker.bootstrap, src, [Rec(value=f"new{i}".encode()) for i in range(2)])

    from pyspark.errors import StreamingQueryException

    with pytest.raises(StreamingQueryException, match="(?i)data loss|offset was changed|lost"):
        run_available_now(stream_source(spark, broker, src), ckpt_fail, out, broker)
    run_available_now(stream_source(spark, broker, src, failOnDataLoss="false"), ckpt_skip, out, broker)


def test_stream_fail_on_data_loss_after_the_log_start_moved(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    """Records the checkpoint expects next were removed from the log's start (DeleteRecords, the
    mechanism retention uses): failOnDataLoss=true fails the query, false resumes at the log start."""
    src, out = unique_topic("gone-src"), unique_topic("gone-out")
    create_topic(broker.bootstrap, src, 1)
    produce(broker.bootstrap, src, [Rec(value=f"a{i}".encode()) for i in range(5)])
    ckpt_fail, ckpt_skip = tmp_path / "fail", tmp_path / "skip"
    for ckpt in (ckpt_fail, ckpt_skip):
        run_available_now(stream_source(spark, broker, src), ckpt, out, broker)
    produce(broker.bootstrap, src, [Rec(value=f"b{i}".encode()) for i in range(5, 10)])
    assert delete_records_before(broker.bootstrap, src, 0, 8) == 8  # offsets 5..7 are gone

    from pyspark.errors import StreamingQueryException

    with pytest.raises(StreamingQueryException, match="(?i)data loss|lost|out of range"):
        run_available_now(stream_source(spark, broker, src), ckpt_fail, out, broker)
    before = len(read_all(broker.bootstrap, out))
    run_available_now(stream_source(spark, broker, src, failOnDataLoss="false"), ckpt_skip, out, broker)
    after = read_all(broker.bootstrap, out, expect=before + 2)
    assert sorted(r.value for r in after[before:]) == [b"b8", b"b9"]


# -- writes ---------------------------------------------------------------------------------------


def first_batch_producer_id(broker: BrokerProcess, topic: str, partition: int = 0) -> int:
    """The producerId of the first record batch on disk (v2 batch header, offset 43)."""
    log = next(broker.partition_dir(topic, partition).glob("*.log"))
    head = log.read_bytes()[:61]
    assert head[16] == 2, "not a v2 record batch"
    return struct.unpack(">q", head[43:51])[0]


def test_batch_write_topic_option_and_column(spark: Any, broker: BrokerProcess) -> None:
    t1, t2, t3 = unique_topic("w1"), unique_topic("w2"), unique_topic("w3")
    for t in (t1, t2, t3):
        create_topic(broker.bootstrap, t, 1)
    header_type = "array<struct<key:string,value:binary>>"
    rows = [(t1, "k1", "a", [("h", bytearray(b"1"))]), (t2, "k2", "b", []), (t1, None, "c", None)]
    df = spark.createDataFrame(rows, f"topic string, key string, value string, headers {header_type}")

    df.write.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap).save()  # topic column
    got1, got2 = read_all(broker.bootstrap, t1), read_all(broker.bootstrap, t2)
    # Two Spark tasks write concurrently, so only the set (not the order) of records is fixed.
    assert sorted((r.value, r.key, r.headers) for r in got1) == [(b"a", b"k1", (("h", b"1"),)), (b"c", None, ())]
    assert [(r.key, r.value) for r in got2] == [(b"k2", b"b")]

    df.write.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap).option("topic", t3).save()
    assert sorted(r.value for r in read_all(broker.bootstrap, t3)) == [b"a", b"b", b"c"]
    # Default Java producer settings: idempotent, so the batches carry a producer id.
    assert first_batch_producer_id(broker, t1) >= 0


def test_stream_write_keeps_keys_headers_partition(spark: Any, broker: BrokerProcess, tmp_path: Path) -> None:
    src, out = unique_topic("sw-src"), unique_topic("sw-out")
    seed(broker, src)
    create_topic(broker.bootstrap, out, 2)
    df = stream_source(spark, broker, src).selectExpr("key", "value", "headers", "partition")
    query = (df.writeStream.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
             .option("topic", out).option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120)
    src_recs = read_all(broker.bootstrap, src)
    got = read_all(broker.bootstrap, out)
    assert [(r.partition, r.key, r.value, r.headers) for r in got] == \
        [(r.partition, r.key, r.value, r.headers) for r in src_recs]
    assert first_batch_producer_id(broker, out) >= 0


def test_spark_driver_runs_outside_the_repository(spark: Any) -> None:
    """Spark 4 leaves an `artifacts/` directory in the driver JVM's working directory: that must be
    a temporary directory, never the repository (where `make test` used to leave one behind)."""
    jvm_cwd = Path(spark.sparkContext._jvm.System.getProperty("user.dir")).resolve()
    repo = REPO_ROOT.resolve()
    assert jvm_cwd != repo and repo not in jvm_cwd.parents, jvm_cwd


def test_batch_read_committed_skips_aborted_transactions(spark: Any, broker: BrokerProcess) -> None:
    """`kafka.isolation.level=read_committed` reads what transactions committed and none of what
    they aborted; the default (read_uncommitted) reads both, as from Kafka."""
    from confluent_kafka import Producer

    topic = unique_topic("txn")
    create_topic(broker.bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"spark-{topic}"})
    producer.init_transactions(30)
    for vs, commit in (([b"c1", b"c2"], True), ([b"a1", b"a2"], False), ([b"c3"], True)):
        producer.begin_transaction()
        for v in vs:
            producer.produce(topic, v, partition=0)
        if commit:
            producer.commit_transaction(30)
        else:
            assert producer.flush(30) == 0
            producer.abort_transaction(30)
    committed = kafka_read(spark, broker, subscribe=topic, **{"kafka.isolation.level": "read_committed"})
    assert values(committed) == ["c1", "c2", "c3"]
    assert values(kafka_read(spark, broker, subscribe=topic)) == ["c1", "c2", "a1", "a2", "c3"]
