"""The traps in shared/compat-pitfalls.md that concern produce, fetch, metadata and admin,
each checked with a stock client and, where the bytes matter, over a raw socket:
ApiVersions header v0 and high advertised versions, whole-batch mid-batch fetch,
ListOffsets (earliest/latest/timestamp/max-timestamp), MESSAGE_TOO_LARGE as an error
rather than a dropped connection, KIP-74 oversized first batch, CreatePartitions results
per topic, DescribeConfigs defaults with sources, and Metadata auto topic creation."""

from __future__ import annotations

import os
import time
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    OffsetSpec,
    ResourceType,
)

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import (
    CLIENT_TIMEOUT_S,
    ConfluentClient,
    DeliveryError,
    KafkaPythonClient,
    Rec,
    assert_records_match,
    create_topic,
    now_ms,
    unique_topic,
    wait_for_topic,
)
from compat_tests.raw_kafka import (
    API_API_VERSIONS,
    API_FETCH,
    API_LIST_OFFSETS,
    API_METADATA,
    API_PRODUCE,
    ERR_MESSAGE_TOO_LARGE,
    ERR_NONE,
    ERR_UNKNOWN_TOPIC_OR_PARTITION,
    RawConnection,
    batches_in,
    produce_body,
    produce_partition_response,
    record_batch,
)

ERR_LEADER_NOT_AVAILABLE = 5
ERR_INVALID_PARTITIONS = 37

# ----------------------------------------------------------------------------------------------------
# Version negotiation
# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_response_uses_header_v0(broker: BrokerProcess, version: int) -> None:
    """Parsed strictly with a v0 response header, every byte accounted for (a stray tagged-field
    byte after the correlation id would shift everything and leave trailing bytes)."""
    with RawConnection(broker.port) as conn:
        error, apis = conn.api_versions(version)
    assert error == ERR_NONE
    assert API_API_VERSIONS in apis and apis[API_API_VERSIONS][1] >= 3
    assert all(0 <= lo <= hi for lo, hi in apis.values()), apis


def test_librdkafka_negotiates_versions(broker: BrokerProcess) -> None:
    """librdkafka reads the ApiVersions v3 response; a header mistake makes it fail outright."""
    md = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=CLIENT_TIMEOUT_S)
    assert [b.id for b in md.brokers.values()] == [1]
    [b] = md.brokers.values()
    assert (b.host, b.port) == ("127.0.0.1", broker.port)


def test_high_max_versions_advertised(broker: BrokerProcess) -> None:
    with RawConnection(broker.port) as conn:
        error, apis = conn.api_versions(3)
    assert error == ERR_NONE
    wanted = {API_PRODUCE: 9, API_FETCH: 12, API_METADATA: 12, API_LIST_OFFSETS: 7, API_API_VERSIONS: 3}
    for key, minimum in wanted.items():
        assert key in apis, f"api {key} not advertised"
        assert apis[key][1] >= minimum, f"api {key} max version {apis[key][1]} < {minimum}"


# ----------------------------------------------------------------------------------------------------
# Fetch and offsets
# ----------------------------------------------------------------------------------------------------


def _raw_fetch(conn: RawConnection, topic: str, offset: int, max_bytes: int = 1_048_576) -> dict[str, Any]:
    body = {
        "replica_id": -1,
        "max_wait_ms": 100,
        "min_bytes": 1,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [{"partition": 0, "fetch_offset": offset, "partition_max_bytes": max_bytes}],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    response = conn.request(API_FETCH, 12, body)
    assert response["error_code"] == ERR_NONE, response
    [t] = response["responses"]
    [p] = t["partitions"]
    return p


def test_fetch_from_mid_batch_returns_the_whole_batch(broker: BrokerProcess) -> None:
    topic = unique_topic("midbatch")
    create_topic(broker.bootstrap, topic)
    base = now_ms() - 20_000
    values = [b"mid-%d" % i for i in range(10)]
    with RawConnection(broker.port) as conn:
        part = produce_partition_response(
            conn.request(API_PRODUCE, 9, produce_body(topic, 0, record_batch(values, base)))
        )
        assert part["error_code"] == ERR_NONE and part["base_offset"] == 0, part
        fetched = _raw_fetch(conn, topic, 5)
    assert fetched["error_code"] == ERR_NONE and fetched["high_watermark"] == 10, fetched
    assert batches_in(bytes(fetched["records"]))[:1] == [(0, 10)], "fetch at offset 5 must return batch 0..9"
    expected = [Rec(v, None, timestamp=base + i) for i, v in enumerate(values)][5:]
    for client_cls in (KafkaPythonClient, ConfluentClient):
        got = client_cls(broker.bootstrap).consume(topic, 0, 5, count=5)
        assert_records_match(expected, got, [5, 6, 7, 8, 9])


def test_list_offsets_earliest_latest_timestamp_and_max_timestamp(broker: BrokerProcess) -> None:
    topic = unique_topic("listoffsets")
    create_topic(broker.bootstrap, topic)
    base = now_ms() - 600_000
    # Timestamps out of order: the maximum sits at offset 2.
    stamps = [base, base + 1000, base + 9000, base + 2000, base + 3000]
    sent = [Rec(f"lo-{i}".encode(), None, timestamp=ts) for i, ts in enumerate(stamps)]
    assert ConfluentClient(broker.bootstrap).produce(topic, sent, **{"linger.ms": 0}) == [0, 1, 2, 3, 4]

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    tp = confluent_kafka.TopicPartition(topic, 0)

    def lookup(spec: OffsetSpec) -> Any:
        return admin.list_offsets({tp: spec}, request_timeout=CLIENT_TIMEOUT_S)[tp].result(
            timeout=CLIENT_TIMEOUT_S
        )

    assert lookup(OffsetSpec.earliest()).offset == 0
    assert lookup(OffsetSpec.latest()).offset == 5
    max_ts = lookup(OffsetSpec.max_timestamp())
    assert (max_ts.offset, max_ts.timestamp) == (2, base + 9000)
    # First offset whose timestamp is >= the target.
    assert lookup(OffsetSpec.for_timestamp(base + 500)).offset == 1
    assert lookup(OffsetSpec.for_timestamp(base + 1000)).offset == 1
    assert lookup(OffsetSpec.for_timestamp(base + 1001)).offset == 2
    assert lookup(OffsetSpec.for_timestamp(base - 1)).offset == 0
    assert lookup(OffsetSpec.for_timestamp(base + 99_999)).offset == -1

    kp = KafkaPythonClient(broker.bootstrap)
    assert kp.offsets(topic, 0) == (0, 5)
    assert kp.offset_for_time(topic, 0, base + 1500) == 2
    assert kp.offset_for_time(topic, 0, base + 99_999) is None


def test_oversized_first_batch_is_still_fetched(broker: BrokerProcess) -> None:
    """KIP-74: a record bigger than the consumer's fetch limits still comes back."""
    topic = unique_topic("kip74")
    create_topic(broker.bootstrap, topic)
    big = os.urandom(300_000)
    sent = [Rec(big, b"big"), Rec(b"small-1", b"s1"), Rec(big[:100_000], b"mid"), Rec(b"small-2", b"s2")]
    # One batch per record, so the first batch alone exceeds every fetch limit below.
    ck = ConfluentClient(broker.bootstrap)
    offsets = [ck.produce(topic, [r], **{"message.max.bytes": 2_000_000})[0] for r in sent]
    assert offsets == [0, 1, 2, 3]
    got = KafkaPythonClient(broker.bootstrap).consume(
        topic, 0, "earliest", count=4, max_partition_fetch_bytes=1024, fetch_max_bytes=1024
    )
    assert_records_match(sent, got, offsets, check_timestamps=False)
    got = ConfluentClient(broker.bootstrap).consume(
        topic, 0, "earliest", count=4, **{"max.partition.fetch.bytes": 1024}
    )
    assert_records_match(sent, got, offsets, check_timestamps=False)
    with RawConnection(broker.port) as conn:
        fetched = _raw_fetch(conn, topic, 0, max_bytes=1024)
    assert batches_in(bytes(fetched["records"] or b""))[:1] == [(0, 1)], (
        "first batch missing from a small fetch"
    )


# ----------------------------------------------------------------------------------------------------
# Producer limits
# ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_broker(tmp_path_factory: pytest.TempPathFactory) -> Any:
    b = BrokerProcess(
        tmp_path_factory.mktemp("small") / "logs",
        {"message.max.bytes": "100000", "auto.create.topics.enable": "false"},
        name="small-broker",
    )
    b.start()
    yield b
    b.close()


def test_message_too_large_is_an_error_not_a_dropped_connection(small_broker: BrokerProcess) -> None:
    topic = unique_topic("toolarge")
    create_topic(small_broker.bootstrap, topic)
    huge = os.urandom(200_000)

    with RawConnection(small_broker.port) as conn:
        part = produce_partition_response(
            conn.request(API_PRODUCE, 9, produce_body(topic, 0, record_batch([huge], now_ms())))
        )
        assert part["error_code"] == ERR_MESSAGE_TOO_LARGE, part
        # Same connection: still open, still served.
        assert conn.api_versions(3)[0] == ERR_NONE
        part = produce_partition_response(
            conn.request(API_PRODUCE, 9, produce_body(topic, 0, record_batch([b"fits"], now_ms())))
        )
        assert part["error_code"] == ERR_NONE and part["base_offset"] == 0, part

    ck = ConfluentClient(small_broker.bootstrap)
    with pytest.raises(DeliveryError) as info:
        ck.produce(topic, [Rec(huge, b"big")], **{"message.max.bytes": 1_000_000, "retries": 0})
    err = info.value.errors[0]
    assert err.code() == confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE, err

    from kafka.errors import MessageSizeTooLargeError

    with pytest.raises(MessageSizeTooLargeError):
        KafkaPythonClient(small_broker.bootstrap).produce(
            topic, [Rec(huge, b"big")], max_request_size=1_000_000
        )

    # Nothing of the refused batches was stored; small records still go through.
    assert ck.produce(topic, [Rec(b"after", b"k")]) == [1]
    assert ck.offsets(topic, 0) == (0, 2)


def test_topic_max_message_bytes_is_enforced(broker: BrokerProcess) -> None:
    topic = unique_topic("topic-limit")
    create_topic(broker.bootstrap, topic, config={"max.message.bytes": "5000"})
    ck = ConfluentClient(broker.bootstrap)
    with pytest.raises(DeliveryError) as info:
        ck.produce(topic, [Rec(os.urandom(20_000), None)], retries=0)
    assert info.value.errors[0].code() == confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE
    assert ck.produce(topic, [Rec(b"x" * 100, None)]) == [0]


# ----------------------------------------------------------------------------------------------------
# Admin
# ----------------------------------------------------------------------------------------------------


def test_create_partitions_reports_per_topic(broker: BrokerProcess) -> None:
    grow, shrink, missing = unique_topic("grow"), unique_topic("shrink"), unique_topic("missing")
    create_topic(broker.bootstrap, grow, 1)
    create_topic(broker.bootstrap, shrink, 2)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    futures = admin.create_partitions(
        [NewPartitions(grow, 3), NewPartitions(shrink, 1), NewPartitions(missing, 2)],
        request_timeout=CLIENT_TIMEOUT_S,
        operation_timeout=CLIENT_TIMEOUT_S,
    )
    assert set(futures) == {grow, shrink, missing}
    futures[grow].result(timeout=CLIENT_TIMEOUT_S)
    for name, code in ((shrink, ERR_INVALID_PARTITIONS), (missing, ERR_UNKNOWN_TOPIC_OR_PARTITION)):
        with pytest.raises(confluent_kafka.KafkaException) as info:
            futures[name].result(timeout=CLIENT_TIMEOUT_S)
        assert info.value.args[0].code() == code, f"{name}: {info.value}"
    wait_for_topic(broker.bootstrap, grow, 3)
    wait_for_topic(broker.bootstrap, shrink, 2)
    ck = ConfluentClient(broker.bootstrap)
    assert ck.produce(grow, [Rec(b"in-new-partition", None, partition=2)]) == [0]
    assert ck.consume(grow, 2, "earliest", count=1)[0].value == b"in-new-partition"


def test_describe_configs_returns_defaults_with_sources(broker: BrokerProcess) -> None:
    topic = unique_topic("configs")
    create_topic(broker.bootstrap, topic, config={"retention.ms": "123456789"})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    res = ConfigResource(ResourceType.TOPIC, topic)
    entries = admin.describe_configs([res], request_timeout=CLIENT_TIMEOUT_S)[res].result(
        timeout=CLIENT_TIMEOUT_S
    )

    assert entries["retention.ms"].value == "123456789"
    assert ConfigSource(entries["retention.ms"].source) == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert not entries["retention.ms"].is_default
    # Defaults are listed too, not only what was set on the topic.
    for name in (
        "cleanup.policy",
        "segment.bytes",
        "retention.bytes",
        "max.message.bytes",
        "compression.type",
    ):
        assert name in entries, f"{name} missing from DescribeConfigs; got {sorted(entries)}"
    assert entries["cleanup.policy"].value == "delete"
    defaults = [e for e in entries.values() if ConfigSource(e.source) == ConfigSource.DEFAULT_CONFIG]
    assert defaults, "no entry reported with source DEFAULT_CONFIG"
    # max.message.bytes inherits the broker's message.max.bytes, set at startup (--override).
    assert entries["max.message.bytes"].value == "2000000"
    assert ConfigSource(entries["max.message.bytes"].source) == ConfigSource.STATIC_BROKER_CONFIG

    broker_res = ConfigResource(ResourceType.BROKER, "1")
    broker_entries = admin.describe_configs([broker_res], request_timeout=CLIENT_TIMEOUT_S)[
        broker_res
    ].result(timeout=CLIENT_TIMEOUT_S)
    assert broker_entries["message.max.bytes"].value == "2000000"
    assert ConfigSource(broker_entries["message.max.bytes"].source) == ConfigSource.STATIC_BROKER_CONFIG


def _raw_metadata(port: int, topic: str, allow_auto_create: bool) -> dict[str, Any]:
    with RawConnection(port) as conn:
        response = conn.request(
            API_METADATA,
            9,
            {
                "topics": [{"name": topic}],
                "allow_auto_topic_creation": allow_auto_create,
                "include_cluster_authorized_operations": False,
                "include_topic_authorized_operations": False,
            },
        )
    [t] = response["topics"]
    assert t["name"] == topic
    return t


def test_metadata_auto_creates_topics_when_enabled(broker_factory: Any) -> None:
    b = broker_factory("autocreate-on", {"auto.create.topics.enable": "true", "num.partitions": "3"})
    topic = unique_topic("auto")
    first = _raw_metadata(b.port, topic, True)
    # Creation may be asynchronous: Kafka (KRaft) answers the creating request with
    # UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE, or with the new topic itself.
    assert first["error_code"] in (ERR_NONE, ERR_LEADER_NOT_AVAILABLE, ERR_UNKNOWN_TOPIC_OR_PARTITION), first
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    t = first
    while (t["error_code"] != ERR_NONE or not t["partitions"]) and time.monotonic() < deadline:
        time.sleep(0.1)
        t = _raw_metadata(b.port, topic, True)
    assert t["error_code"] == ERR_NONE and len(t["partitions"]) == 3, t

    # A client-level view: a producer can write to a topic nobody created.
    topic2 = unique_topic("auto-produce")
    assert ConfluentClient(b.bootstrap).produce(topic2, [Rec(b"hello", None)]) == [0]
    wait_for_topic(b.bootstrap, topic2, 3)

    # allow_auto_topic_creation=false in the request is honoured even when the broker allows it.
    topic3 = unique_topic("auto-not-asked")
    assert _raw_metadata(b.port, topic3, False)["error_code"] == ERR_UNKNOWN_TOPIC_OR_PARTITION
    assert _raw_metadata(b.port, topic3, False)["error_code"] == ERR_UNKNOWN_TOPIC_OR_PARTITION


def test_metadata_does_not_auto_create_when_disabled(broker_factory: Any) -> None:
    b = broker_factory("autocreate-off", {"auto.create.topics.enable": "false"})
    topic = unique_topic("noauto")
    assert _raw_metadata(b.port, topic, True)["error_code"] == ERR_UNKNOWN_TOPIC_OR_PARTITION
    assert _raw_metadata(b.port, topic, True)["error_code"] == ERR_UNKNOWN_TOPIC_OR_PARTITION
    md = AdminClient({"bootstrap.servers": b.bootstrap}).list_topics(timeout=CLIENT_TIMEOUT_S)
    assert topic not in md.topics
    assert not (b.log_dir / f"{topic}-0").exists()


def test_request_with_trailing_bytes_is_answered(broker: BrokerProcess) -> None:
    """Kafka ignores bytes after a request body; librdkafka's all-topics Metadata v12 request
    carries such bytes, so refusing them breaks `AdminClient.list_topics()`."""
    import struct

    import wire

    with RawConnection(broker.port) as conn:
        request = wire.encode_request(API_METADATA, 12, 9, "compat-raw", {"topics": None})
        padded = request[4:] + b"\x01\x00\x00"
        conn.send(struct.pack(">i", len(padded)) + padded)
        data = conn.recv_frame()
        assert data is not None, "broker closed the connection on a request with trailing bytes"
        cid, body = wire.decode_response(API_METADATA, 12, data)
    assert cid == 9
    assert [b["node_id"] for b in body["brokers"]] == [1]
