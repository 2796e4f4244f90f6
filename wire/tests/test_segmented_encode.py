"""encode_response_segments: the same frame as encode_response, large record sets left uncopied."""

from __future__ import annotations

import uuid

import pytest

import wire
from wire.frames import encode_response_segments
from wire.primitives import DEFER_RECORDS_MIN


def _fetch_body(*record_sets: bytes | None) -> dict:
    partitions = [
        {"partition_index": i, "error_code": 0, "high_watermark": 5, "last_stable_offset": 5, "log_start_offset": 0,
         "aborted_transactions": None, "preferred_read_replica": -1, "records": records}
        for i, records in enumerate(record_sets)
    ]
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0,
            "responses": [{"topic": "t", "topic_id": uuid.uuid4(), "partitions": partitions}]}


@pytest.mark.parametrize("version", [4, 7, 11, 12, 13, 16, 17])
def test_segments_join_to_the_encoded_frame(version: int) -> None:
    big = b"x" * DEFER_RECORDS_MIN
    body = _fetch_body(big, b"small", None, memoryview(b"y" * (3 * DEFER_RECORDS_MIN)), b"")
    segments = encode_response_segments(1, version, 99, body)
    assert b"".join(bytes(s) for s in segments) == bytes(wire.encode_response(1, version, 99, body))
    assert any(s is big for s in segments), "the large record set is sent as it is, not copied"


def test_small_responses_are_one_buffer() -> None:
    segments = encode_response_segments(1, 12, 1, _fetch_body(b"tiny"))
    assert len(segments) == 1
    assert bytes(segments[0]) == bytes(wire.encode_response(1, 12, 1, _fetch_body(b"tiny")))
