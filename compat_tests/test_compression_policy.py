"""Compression policy: topic and broker `compression.type`, proven with real clients.

The codec matrix: for every topic `compression.type` (producer, uncompressed, gzip, snappy, lz4,
zstd) one topic receives batches from every producer codec of confluent-kafka (raw snappy),
kafka-python (xerial snappy) and a hand-built xerial-snappy batch; on disk every batch carries
the topic's codec (or the producer's, for `producer`), and kafka-python, confluent-kafka and
Kafka's Java console consumer (one JVM per topic codec) read every record back.  Levels
(`compression.gzip.level`, `compression.zstd.level`) change what is stored, the broker-wide
`compression.type` applies to topics without an override, and a Fetch below v10 is never sent
zstd data: UNSUPPORTED_COMPRESSION_TYPE, as from Kafka.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from confluent_kafka.admin import ConfigSource

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
from compat_tests.raw_kafka import API_PRODUCE, RawConnection, produce_body, produce_partition_response
from compat_tests.storage_support import (
    describe_topic,
    disk_batches,
    disk_records,
    log_bytes,
    raw_fetch,
    segment_files,
)
from pykafkad._rust_log import decode_batch_headers, decode_batches, encode_batch

TOPIC_CODECS = ["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"]
PRODUCER_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_ID = {"none": 0, "uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
PER_GROUP = 3
ERR_UNSUPPORTED_COMPRESSION_TYPE = 76


def _values(source: str, codec: str) -> list[bytes]:
    return [f"{source}:{codec}:{i}:".encode() + b"payload " * 20 for i in range(PER_GROUP)]


def _raw_produce(b: BrokerProcess, topic: str, batch: bytes) -> int:
    with RawConnection(b.port) as conn:
        part = produce_partition_response(conn.request(API_PRODUCE, 9, produce_body(topic, 0, batch)))
    assert part["error_code"] == 0, part
    return int(part["base_offset"])


def _xerial_batch(values: list[bytes]) -> bytes:
    """A snappy batch in the xerial (snappy-java) framing Java clients write."""
    batch = encode_batch([(None, v) for v in values], now_ms(), compression="snappy")
    assert batch[61:69] == b"\x82SNAPPY\x00", "encode_batch no longer writes the xerial framing"
    return batch


def _confluent_send(b: BrokerProcess, codec: str, per_topic: dict[str, list[bytes]]) -> None:
    """One confluent-kafka producer with `codec` sends each topic its values, one topic after another."""
    producer = ConfluentClient(b.bootstrap).producer(**{"compression.type": codec, "acks": "all"})
    errors: list[Any] = []
    for topic, values in per_topic.items():
        for v in values:
            producer.produce(topic, value=v, partition=0,
                             on_delivery=lambda err, _m: errors.append(err) if err else None)
        assert producer.flush(CLIENT_TIMEOUT_S) == 0
    assert not errors, errors[:3]


def _kafka_python_send(b: BrokerProcess, codec: str, per_topic: dict[str, list[bytes]]) -> None:
    """The same with one kafka-python producer (whose snappy is xerial-framed)."""
    producer = KafkaPythonClient(b.bootstrap).producer(acks="all",
                                                       compression_type=None if codec == "none" else codec)
    try:
        for topic, values in per_topic.items():
            futures = [producer.send(topic, value=v, partition=0) for v in values]
            producer.flush(timeout=CLIENT_TIMEOUT_S)
            for f in futures:
                f.get(timeout=CLIENT_TIMEOUT_S)
    finally:
        producer.close(timeout=10)


def _java_values(b: BrokerProcess, topic: str, count: int) -> list[bytes]:
    out = run_tool("kafka-console-consumer", [
        "--bootstrap-server", b.bootstrap, "--topic", topic, "--partition", "0", "--offset", "earliest",
        "--max-messages", str(count), "--timeout-ms", "30000",
    ]).stdout
    return [line.encode() for line in out.splitlines() if line.strip()]


@pytest.mark.compat_timeout(240)
def test_codec_matrix_read_back_by_every_client(broker: BrokerProcess) -> None:
    topics = {tc: unique_topic(f"codec-{tc}") for tc in TOPIC_CODECS}
    for tc, name in topics.items():
        create_topic(broker.bootstrap, name, config={"compression.type": tc})
    sent: dict[str, list[bytes]] = {tc: [] for tc in TOPIC_CODECS}
    source_codec: dict[bytes, str] = {}

    # One producer per client and codec, sending to every topic.
    for codec in PRODUCER_CODECS:
        batches = {tc: _values("confluent-kafka", codec) for tc in topics}
        _confluent_send(broker, codec, {topics[tc]: v for tc, v in batches.items()})
        for tc, values in batches.items():
            sent[tc] += values
            source_codec.update(dict.fromkeys(values, codec))
        batches = {tc: _values("kafka-python", codec) for tc in topics}
        _kafka_python_send(broker, codec, {topics[tc]: v for tc, v in batches.items()})
        for tc, values in batches.items():
            sent[tc] += values
            source_codec.update(dict.fromkeys(values, codec))
    for tc, name in topics.items():
        values = _values("raw-xerial", "snappy")
        _raw_produce(broker, name, _xerial_batch(values))
        sent[tc] += values
        source_codec.update(dict.fromkeys(values, "snappy"))

    # Both snappy framings arrived: raw from librdkafka, xerial from kafka-python and the hand-built batch
    # (stored verbatim on the "producer" topic; every other topic had to decode them to recompress).
    framing = {}
    for path in segment_files(broker.partition_dir(topics["producer"])):
        data, pos = path.read_bytes(), 0
        for h in decode_batch_headers(data):
            if h["compression"] == CODEC_ID["snappy"]:
                [(_, _, _, value, _), *_] = decode_batches(data[pos:pos + int(h["size"])])
                framing[value.split(b":")[0]] = data[pos + 61:pos + 69] == b"\x82SNAPPY\x00"
            pos += int(h["size"])
    assert framing == {b"confluent-kafka": False, b"kafka-python": True, b"raw-xerial": True}, framing

    problems = []
    for tc, name in topics.items():
        part = broker.partition_dir(name)
        # On disk: each batch is in the topic's codec, or the producer's own one for "producer".
        by_offset = {o: v for o, _, v in disk_records(part)}
        for h in disk_batches(part):
            value = by_offset[int(h["base_offset"])]
            assert value is not None
            want = CODEC_ID[source_codec[value] if tc == "producer" else tc]
            if h["compression"] != want:
                problems.append(f"{tc}: batch at {h['base_offset']} from {value[:20]!r} stored with codec "
                                f"{h['compression']}, expected {want}")
        expected = sent[tc]
        for client in (ConfluentClient(broker.bootstrap), KafkaPythonClient(broker.bootstrap)):
            got = [g.value for g in client.consume(name, 0, "earliest", len(expected))]
            if got != expected:
                problems.append(f"{tc}: {client.name} read back {len(got)} records, not the {len(expected)} sent")
        java = _java_values(broker, name, len(expected))
        if java != expected:
            problems.append(f"{tc}: the Java console consumer read {len(java)} records, not the {len(expected)} sent")
    assert not problems, "\n".join(problems)


def test_compression_levels(broker: BrokerProcess) -> None:
    """The same uncompressed batch stored under gzip level 1 vs 9 and zstd level 1 vs 19."""
    rng = random.Random(6)
    words = [f"w{rng.randrange(400)}" for _ in range(20000)]
    values = [" ".join(words[i:i + 100]).encode() for i in range(0, 20000, 100)]
    sizes = {}
    for codec, level in (("gzip", 1), ("gzip", 9), ("zstd", 1), ("zstd", 19)):
        name = unique_topic(f"level-{codec}{level}")
        create_topic(broker.bootstrap, name,
                     config={"compression.type": codec, f"compression.{codec}.level": str(level)})
        _raw_produce(broker, name, encode_batch([(None, v) for v in values], now_ms()))
        sizes[(codec, level)] = log_bytes(broker.partition_dir(name))
        assert [h["compression"] for h in disk_batches(broker.partition_dir(name))] == [CODEC_ID[codec]]
        got = ConfluentClient(broker.bootstrap).consume(name, 0, "earliest", len(values))
        assert [g.value for g in got] == values
    assert sizes[("gzip", 9)] < sizes[("gzip", 1)], sizes
    assert sizes[("zstd", 19)] < sizes[("zstd", 1)], sizes


def test_broker_wide_compression_type(broker_factory) -> None:
    b = broker_factory("lz4-broker", {"compression.type": "lz4", "auto.create.topics.enable": "false"})
    plain, own = unique_topic("bcodec-default"), unique_topic("bcodec-producer")
    create_topic(b.bootstrap, plain)
    create_topic(b.bootstrap, own, config={"compression.type": "producer"})
    entry = describe_topic(b.bootstrap, plain)["compression.type"]
    assert (entry.value, entry.source) == ("lz4", ConfigSource.STATIC_BROKER_CONFIG.value)
    for name, codec in ((plain, 3), (own, 0)):
        ConfluentClient(b.bootstrap).produce(name, [Rec(b"x" * 200, None) for _ in range(10)])
        assert {h["compression"] for h in disk_batches(b.partition_dir(name))} == {codec}
        assert len(KafkaPythonClient(b.bootstrap).consume(name, 0, "earliest", 10)) == 10


def test_fetch_below_v10_never_gets_zstd(broker: BrokerProcess) -> None:
    """Fetch v9 of a zstd batch: UNSUPPORTED_COMPRESSION_TYPE; batches before it are served and the
    answer stops before it; a zstd batch recompressed to gzip by the topic is fine; an uncompressed
    one recompressed to zstd by the topic is refused to v9 too."""
    mixed, to_gzip, to_zstd = (unique_topic(f"zstd-{n}") for n in ("mixed", "togzip", "tozstd"))
    create_topic(broker.bootstrap, mixed)
    create_topic(broker.bootstrap, to_gzip, config={"compression.type": "gzip"})
    create_topic(broker.bootstrap, to_zstd, config={"compression.type": "zstd"})
    pad = b"." * 300
    gzip_values = [b"gz-%d" % i + pad for i in range(3)]
    zstd_values = [b"zs-%d" % i + pad for i in range(3)]

    def batch(values: list[bytes], codec: str) -> bytes:  # exactly one batch per produce
        return encode_batch([(None, v) for v in values], now_ms(), compression=codec)  # type: ignore[arg-type]

    _raw_produce(broker, mixed, batch(gzip_values, "gzip"))
    _raw_produce(broker, mixed, batch(zstd_values, "zstd"))
    _raw_produce(broker, to_gzip, batch(zstd_values, "zstd"))
    _raw_produce(broker, to_zstd, batch(zstd_values, "none"))

    assert [h["compression"] for h in disk_batches(broker.partition_dir(mixed))] == [1, 4]
    first = raw_fetch(broker.port, mixed, 0, version=9)
    assert first["error_code"] == 0
    assert [h["compression"] for h in decode_batch_headers(first["records"])] == [1], "v9 must stop before zstd"
    assert [r[3] for r in decode_batches(first["records"])] == gzip_values
    assert raw_fetch(broker.port, mixed, 3, version=9)["error_code"] == ERR_UNSUPPORTED_COMPRESSION_TYPE
    assert raw_fetch(broker.port, to_zstd, 0, version=9)["error_code"] == ERR_UNSUPPORTED_COMPRESSION_TYPE
    v10 = raw_fetch(broker.port, mixed, 3, version=10)
    assert v10["error_code"] == 0 and [r[3] for r in decode_batches(v10["records"])] == zstd_values
    ok = raw_fetch(broker.port, to_gzip, 0, version=9)
    assert ok["error_code"] == 0
    assert [h["compression"] for h in decode_batch_headers(ok["records"])] == [1]
    assert [r[3] for r in decode_batches(ok["records"])] == zstd_values
