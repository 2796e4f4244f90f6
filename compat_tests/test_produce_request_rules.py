"""Kafka's rules for a Produce request's records (v3+), answered as Kafka answers them.

Kafka refuses, per partition and before the log sees anything: more than one record batch
(INVALID_RECORD), a batch of magic 0 or 1 (INVALID_RECORD) and zstd below Produce v7
(UNSUPPORTED_COMPRESSION_TYPE).  Before, pykafkad appended two batches, and answered a magic-1
message set with UNSUPPORTED_FOR_MESSAGE_FORMAT.  Each case goes to pykafkad and to a real
Kafka 4.4.0, and the error codes and what the partition then holds must match.  Kafka sends no
error message with these; pykafkad says which rule was broken (v8+ responses carry it).
"""

from __future__ import annotations

import struct
import time
import uuid
import zlib

import pytest
import zstandard

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.raw_kafka import RawConnection, crc32c, produce_body, produce_partition_response, record_batch


def _magic1_message(value: bytes, timestamp: int) -> bytes:
    """A legacy (magic 1) message set of one message."""
    body = struct.pack(">bbq", 1, 0, timestamp) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", 0, len(message)) + message


def _zstd_batch(values: list[bytes], timestamp: int) -> bytes:
    """A magic-2 batch with its records compressed by zstd (codec 4)."""
    plain = record_batch(values, timestamp)
    records = plain[61:]  # the records follow the 61-byte batch header
    after_crc = bytearray(plain[21:61]) + zstandard.ZstdCompressor().compress(records)
    after_crc[1] |= 4  # attributes (big-endian int16): low bits are the codec
    crc = crc32c(bytes(after_crc))
    after_length = struct.pack(">ibI", 0, 2, crc) + bytes(after_crc)
    return struct.pack(">qi", 0, len(after_length)) + after_length


def _cases() -> dict[str, tuple[int, bytes]]:
    ts = int(time.time() * 1000)
    one = record_batch([b"a", b"b"], ts)
    return {
        "two batches": (9, one + record_batch([b"c"], ts)),
        "magic 1": (9, _magic1_message(b"old", ts)),
        "zstd at v6": (6, _zstd_batch([b"z1", b"z2"], ts)),
        "zstd at v7": (7, _zstd_batch([b"z1", b"z2"], ts)),
        "one batch": (9, one),
    }


def _answers(port: int) -> dict[str, tuple[int, str | None, int]]:
    """Each case on a topic of its own: (error code, error message, log end offset after it)."""
    found = {}
    with RawConnection(port) as conn:
        for name, (version, records) in _cases().items():
            topic = unique_topic("produce-rules")
            conn.create_topic(topic)
            conn.wait_for_leader(topic)
            part = produce_partition_response(conn.request(0, version, produce_body(topic, 0, records)))
            listed = conn.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                "timestamp": -1}]}]})
            end = listed["topics"][0]["partitions"][0]["offset"]
            found[name] = (part["error_code"], part["error_message"], end)
    return found


@pytest.mark.compat_timeout(120)
def test_produce_records_rules_as_on_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours, theirs = _answers(broker.port), _answers(reference_kafka.port)
    codes_and_ends = {case: (code, end) for case, (code, _, end) in ours.items()}
    assert codes_and_ends == {case: (code, end) for case, (code, _, end) in theirs.items()}, \
        "\n".join(f"{case}: pykafkad {ours[case]} kafka {theirs[case]}" for case in ours)
    assert codes_and_ends["two batches"] == (87, 0) and codes_and_ends["zstd at v6"] == (76, 0)
    assert "exactly one record batch" in ours["two batches"][1]


def _by_id(port: int) -> tuple[int, bool, int]:
    """Produce v13 (topic ids, KIP-516) to a topic by its id and to an unknown id: the first's error
    and whether its answer names the id, and the unknown id's error."""
    with RawConnection(port) as conn:
        topic = unique_topic("produce-by-id")
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
        described = conn.request(3, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                         "allow_auto_topic_creation": False})
        topic_id = described["topics"][0]["topic_id"]
        batch = record_batch([b"by-id"], int(time.time() * 1000))

        def produce(tid: uuid.UUID) -> dict:
            return conn.request(0, 13, {"transactional_id": None, "acks": -1, "timeout_ms": 10000, "topic_data": [
                {"topic_id": tid, "partition_data": [{"index": 0, "records": batch}]}]})["responses"][0]
        known, unknown = produce(topic_id), produce(uuid.uuid4())
        return (known["partition_responses"][0]["error_code"], known["topic_id"] == topic_id,
                unknown["partition_responses"][0]["error_code"])


def test_produce_v13_names_topics_by_id_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    assert _by_id(broker.port) == _by_id(reference_kafka.port) == (0, True, 100)
