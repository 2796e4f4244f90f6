"""A producer's batch flagged LogAppendTime (attributes bit 3) is refused as Kafka refuses it.

Kafka's LogValidator reads every record of such a batch as the batch's maxTimestamp.  A CreateTime
topic checks that timestamp against message.timestamp.before/after.max.ms and keeps the batch
(stored as CreateTime, maxTimestamp kept) when it is in range; the flag itself is refused, with
INVALID_TIMESTAMP and a record error per record ("Producer should not set timestamp type to
LogAppendTime"), on a LogAppendTime topic and when the batch has no timestamp (-1).  pykafkad
appended every such batch.  Each case goes to pykafkad and to a real Kafka 4.4.0 on a topic of its
own; the error, the records named in the record errors, the log end offset and the stored batch's
timestamp type and maxTimestamp must match.
"""

from __future__ import annotations

import gzip
import struct
import time
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.raw_kafka import RawConnection, crc32c, produce_body, produce_partition_response, record_batch

INVALID_TIMESTAMP = 32
_ATTRIBUTES, _MAX_TIMESTAMP, _HEADER = 21, 35, 61
LOG_APPEND_TIME_BIT, GZIP = 0x08, 1
HOUR_MS = 3_600_000


def _batch(now: int, *, flagged: bool, max_timestamp: int | None = None, codec: int = 0) -> bytes:
    """Three records at now - 1000 + i; the flag, maxTimestamp and codec as asked."""
    plain = bytearray(record_batch([b"one", b"two", b"three"], now - 1000))
    after_crc = bytearray(plain[_ATTRIBUTES:_HEADER])
    if codec:
        after_crc[1] |= codec
    if flagged:
        after_crc[1] |= LOG_APPEND_TIME_BIT
    if max_timestamp is not None:
        struct.pack_into(">q", after_crc, _MAX_TIMESTAMP - _ATTRIBUTES, max_timestamp)
    records = gzip.compress(bytes(plain[_HEADER:])) if codec == GZIP else bytes(plain[_HEADER:])
    after_crc += records
    after_length = struct.pack(">ibI", 0, 2, crc32c(bytes(after_crc))) + bytes(after_crc)
    return struct.pack(">qi", 0, len(after_length)) + after_length


def _cases(now: int) -> dict[str, tuple[str, bytes]]:
    """name -> (the topic's message.timestamp.type, the batch)"""
    return {
        "CreateTime topic, flagged, in range": ("CreateTime", _batch(now, flagged=True, max_timestamp=now)),
        "CreateTime topic, flagged, no timestamp": ("CreateTime", _batch(now, flagged=True, max_timestamp=-1)),
        "CreateTime topic, flagged, 2 h ahead": ("CreateTime", _batch(now, flagged=True,
                                                                     max_timestamp=now + 2 * HOUR_MS)),
        "LogAppendTime topic, flagged": ("LogAppendTime", _batch(now, flagged=True)),
        "LogAppendTime topic, flagged, gzip": ("LogAppendTime", _batch(now, flagged=True, codec=GZIP)),
        "CreateTime topic, flagged, gzip, no timestamp": ("CreateTime", _batch(now, flagged=True, max_timestamp=-1,
                                                                              codec=GZIP)),
        "LogAppendTime topic, not flagged": ("LogAppendTime", _batch(now, flagged=False)),
        "CreateTime topic, not flagged": ("CreateTime", _batch(now, flagged=False)),
    }


def _stored(conn: RawConnection, topic: str, now: int) -> tuple[bool, int | str] | None:
    """The first stored batch's (LogAppendTime flag, maxTimestamp; "now" for the broker's clock)."""
    fetched = conn.request(1, 12, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                     "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]})
    records = fetched["responses"][0]["partitions"][0]["records"]
    if not records:
        return None
    (attributes,) = struct.unpack_from(">h", records, _ATTRIBUTES)
    (max_timestamp,) = struct.unpack_from(">q", records, _MAX_TIMESTAMP)
    flagged = bool(attributes & LOG_APPEND_TIME_BIT)
    return flagged, "now" if flagged and max_timestamp >= now else max_timestamp


def _answers(port: int, now: int) -> dict[str, tuple[Any, ...]]:
    """Each case: (error, the records named in record errors, log end offset, stored batch), and the
    record error messages."""
    found = {}
    with RawConnection(port) as conn:
        for name, (timestamp_type, batch) in _cases(now).items():
            topic = unique_topic("append-time-flag")
            conn.create_topic(topic, configs={"message.timestamp.type": timestamp_type})
            conn.wait_for_leader(topic)
            part = produce_partition_response(conn.request(0, 9, produce_body(topic, 0, batch)))
            listed = conn.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                "timestamp": -1}]}]})
            end = listed["topics"][0]["partitions"][0]["offset"]
            errors = part["record_errors"] or []
            found[name] = ((part["error_code"], [e["batch_index"] for e in errors], end, _stored(conn, topic, now)),
                           [e["batch_index_error_message"] for e in errors])
    return found


@pytest.mark.compat_timeout(180)
def test_log_append_time_flag_from_a_producer_is_refused_as_by_kafka(broker: BrokerProcess,
                                                                    reference_kafka: BrokerProcess) -> None:
    now = int(time.time() * 1000)
    ours, theirs = _answers(broker.port, now), _answers(reference_kafka.port, now)
    differences = [f"{case}: pykafkad {ours[case][0]} kafka {theirs[case][0]}"
                   for case in ours if ours[case][0] != theirs[case][0]]
    assert not differences, "\n".join(differences)
    refused = (INVALID_TIMESTAMP, [0, 1, 2], 0, None)
    assert ours["LogAppendTime topic, flagged"][0] == refused
    assert ours["CreateTime topic, flagged, no timestamp"][0] == refused
    # A CreateTime topic keeps a flagged batch in range as CreateTime, with its maxTimestamp.
    assert ours["CreateTime topic, flagged, in range"][0] == (0, [], 3, (False, now))
    for case in ("LogAppendTime topic, flagged", "CreateTime topic, flagged, gzip, no timestamp"):
        for messages in (ours[case][1], theirs[case][1]):
            assert all(m.endswith("Producer should not set timestamp type to LogAppendTime.") for m in messages), \
                messages
