"""Hand-written byte vectors for the cases that are easy to get wrong."""

from __future__ import annotations

import uuid

import pytest

import wire
from wire import DecodeError, ErrorCode, UnsupportedVersion


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def test_api_versions_v3_response_uses_header_v0() -> None:
    body = {
        "error_code": 0,
        "api_keys": [{"api_key": 0, "min_version": 3, "max_version": 13}],
        "throttle_time_ms": 0,
    }
    frame = wire.encode_response(18, 3, 7, body)
    assert frame == h(
        "00000013"  # length
        "00000007"  # correlation id, and no tagged-field byte: header v0
        "0000"  # error code
        "02"  # compact array: 1 element
        "0000 0003 000d 00"  # api key, min, max, element tags
        "00000000"  # throttle time
        "00"  # body tags
    )
    assert wire.decode_response(18, 3, frame[4:]) == (7, {**body, **_API_VERSIONS_V3_TAG_DEFAULTS})


_API_VERSIONS_V3_TAG_DEFAULTS = {
    "supported_features": [],
    "finalized_features_epoch": -1,
    "finalized_features": [],
    "zk_migration_ready": False,
}


def test_flexible_response_header_has_tag_byte() -> None:
    frame = wire.encode_response(12, 4, 9, {"error_code": 0, "throttle_time_ms": 0})
    assert frame == h("0000000c 00000009 00 00000000 0000 00")  # header tags, throttle time, error, body tags


def test_unsupported_version_api_versions_v0_response() -> None:
    body = {
        "error_code": ErrorCode.UNSUPPORTED_VERSION,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
    }
    frame = wire.encode_response(18, 0, 9, body)
    assert frame == h("00000010 00000009 0023 00000001 0012 0000 0004")
    correlation_id, decoded = wire.decode_response(18, 0, frame[4:])
    assert correlation_id == 9
    assert decoded["error_code"] == ErrorCode.UNSUPPORTED_VERSION == 35


def test_api_versions_tagged_body_field() -> None:
    frame = wire.encode_response(18, 3, 1, {"finalized_features_epoch": 5})
    # ... throttle time, then 1 tagged field: tag 1, 8 bytes, int64 5
    assert frame.endswith(h("00000000 01 01 08 0000000000000005"))
    assert wire.decode_response(18, 3, frame[4:])[1]["finalized_features_epoch"] == 5


def test_compact_nullable_string_null_and_empty() -> None:
    frame = wire.encode_request(
        0, 9, 1, "c", {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": []}
    )
    assert frame == h(
        "00000015"
        "0000 0009 00000001 0001 63 00"  # header v2: client id is a classic string, then header tags
        "00"  # transactional id: compact null
        "ffff 000003e8"  # acks, timeout
        "01"  # empty compact array
        "00"  # body tags
    )
    header = wire.decode_request_header(frame[4:])
    assert wire.decode_request(0, 9, frame[4:], header.body_offset)["transactional_id"] is None
    empty = frame[:16] + b"\x01" + frame[17:]  # compact length 1 = empty string
    assert wire.decode_request(0, 9, empty[4:], header.body_offset)["transactional_id"] == ""


def test_tagged_field_in_request_header_v2_is_skipped() -> None:
    frame = h(
        "0012 0003 00000005 0002 6162"  # ApiVersions v3, correlation 5, client id "ab"
        "01 07 02 7879"  # header tags: one unknown tag 7 with 2 bytes
        "02 6e 02 31 00"  # body: software name "n", version "1", no tags
    )
    header = wire.decode_request_header(frame)
    assert header == wire.RequestHeader(18, 3, 5, "ab", 17)
    body = wire.decode_request(18, 3, frame, header.body_offset)
    # cluster_id and node_id (v5, KIP-1242) are absent from v3 and decode as their defaults
    assert body == {"client_software_name": "n", "client_software_version": "1", "cluster_id": None, "node_id": -1}


def test_unknown_tag_in_body_is_skipped() -> None:
    frame = h("0012 0003 00000005 ffff 0002 6e 02 31 02 05 01 ff 09 00")
    header = wire.decode_request_header(frame)
    assert header.client_id is None
    assert wire.decode_request(18, 3, frame, header.body_offset)["client_software_name"] == "n"


def test_tagged_field_with_wrong_size_is_rejected() -> None:
    # ProduceResponse v10+ partition tag 0 (current leader: 2 x int32) declared as 3 bytes
    good = wire.encode_response(
        0,
        10,
        1,
        {
            "responses": [
                {
                    "name": "t",
                    "partition_responses": [
                        {"index": 0, "current_leader": {"leader_id": 1, "leader_epoch": 2}}
                    ],
                }
            ]
        },
    )
    marker = h("01 00 09 00000001 00000002 00")  # 1 tag, tag 0, size 9: leader id, epoch, struct tags
    assert marker in good
    bad = good.replace(marker, h("01 00 08 00000001 00000002 00"))
    with pytest.raises(DecodeError):
        wire.decode_response(0, 10, bad[4:])


def test_request_header_for_unknown_api_or_version() -> None:
    frame = h("03e7 0000 00000001 0002 6162 99 98")
    assert wire.decode_request_header(frame) == wire.RequestHeader(999, 0, 1, "ab", 12)
    with pytest.raises(UnsupportedVersion):
        wire.decode_request(999, 0, frame, 12)
    # ApiVersions v99: parsed as header v1 even though it would be flexible; the tag byte stays in the body
    frame = h("0012 0063 00000002 0001 78 00 0102")
    assert wire.decode_request_header(frame) == wire.RequestHeader(18, 99, 2, "x", 11)
    with pytest.raises(UnsupportedVersion):
        wire.decode_request(18, 99, frame, 11)


def test_request_header_too_short() -> None:
    for frame in (b"", h("0012"), h("0012 0003 0000"), h("0012 0003 00000005 0005 61")):
        with pytest.raises(DecodeError):
            wire.decode_request_header(frame)


def test_trailing_bytes_after_a_request_are_ignored_as_kafka_does() -> None:
    frame = wire.encode_request(12, 0, 3, "c", {"group_id": "g", "generation_id": 1, "member_id": "m"})
    header = wire.decode_request_header(frame[4:])
    assert wire.decode_request(12, 0, frame[4:], header.body_offset)["group_id"] == "g"
    assert wire.decode_request(12, 0, frame[4:] + b"\x01\x00\x00", header.body_offset)["member_id"] == "m"


def test_trailing_bytes_after_a_response_are_rejected() -> None:
    frame = wire.encode_response(12, 0, 3, {"error_code": 0})
    assert wire.decode_response(12, 0, frame[4:])[1]["error_code"] == 0
    with pytest.raises(DecodeError):
        wire.decode_response(12, 0, frame[4:] + b"\x00")


def test_records_are_a_view_of_the_frame() -> None:
    records = bytes(range(200))
    body = {
        "acks": 1,
        "timeout_ms": 5,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}],
    }
    frame = wire.encode_request(0, 9, 1, "c", body)[4:]
    header = wire.decode_request_header(frame)
    decoded = wire.decode_request(0, 9, frame, header.body_offset)
    view = decoded["topic_data"][0]["partition_data"][0]["records"]
    assert isinstance(view, memoryview)
    assert view.obj is frame
    assert view == records
    # encoding accepts memoryview and bytearray, and None for null records
    for value in (memoryview(records), bytearray(records), None):
        body["topic_data"][0]["partition_data"][0]["records"] = value
        again = wire.encode_request(0, 9, 1, "c", body)
        got = wire.decode_request(0, 9, again[4:], header.body_offset)["topic_data"][0]["partition_data"][0]
        assert got["records"] == value if value is not None else got["records"] is None


def test_classic_records_null_and_length() -> None:
    body = {"acks": 1, "timeout_ms": 5, "topic_data": [{"name": "t", "partition_data": [{"index": 0}]}]}
    frame = wire.encode_request(0, 3, 1, "c", body)
    assert frame.endswith(h("00000000 ffffffff"))  # partition index, null records (classic int32 length)


def test_nullable_struct_uses_int8_presence_marker() -> None:
    frame = wire.encode_response(68, 0, 1, {"member_epoch": 3, "heartbeat_interval_ms": 10})
    correlation_id, body = wire.decode_response(68, 0, frame[4:])
    assert body["assignment"] is None
    assert frame.endswith(h("0000000a ff 00"))  # interval, null assignment, body tags
    frame = wire.encode_response(68, 0, 1, {"assignment": {"topic_partitions": []}})
    assert frame.endswith(h("00000000 01 01 00 00"))  # interval, present, empty array, struct tags, body tags
    assert wire.decode_response(68, 0, frame[4:])[1]["assignment"] == {"topic_partitions": []}


def test_defaults_on_decode_and_encode() -> None:
    frame = wire.encode_request(3, 0, 1, "c", {"topics": [{"name": "a"}]})
    assert frame == h("00000012 0003 0000 00000001 0001 63 00000001 0001 61")
    header = wire.decode_request_header(frame[4:])
    body = wire.decode_request(3, 0, frame[4:], header.body_offset)
    assert body["allow_auto_topic_creation"] is True  # absent in v0; the JSON default is "true"
    assert body["include_topic_authorized_operations"] is False
    assert body["topics"] == [{"topic_id": uuid.UUID(int=0), "name": "a"}]
    frame = wire.encode_response(
        0, 3, 1, {"responses": [{"name": "t", "partition_responses": [{"index": 1}]}]}
    )
    partition = wire.decode_response(0, 3, frame[4:])[1]["responses"][0]["partition_responses"][0]
    assert partition["log_start_offset"] == -1  # absent before v5, default "-1"
    assert partition["log_append_time_ms"] == -1
    assert partition["current_leader"] == {"leader_id": -1, "leader_epoch": -1}
    assert partition["error_message"] is None


def test_decoded_defaults_are_not_shared() -> None:
    frame = wire.encode_response(18, 3, 1, {})
    first = wire.decode_response(18, 3, frame[4:])[1]
    first["supported_features"].append("x")
    assert wire.decode_response(18, 3, frame[4:])[1]["supported_features"] == []


def test_encode_errors() -> None:
    with pytest.raises(wire.EncodeError):
        wire.encode_response(12, 0, 1, {"error_code": 1 << 20})
    with pytest.raises(wire.EncodeError):
        wire.encode_request(12, 0, 1, "c", {"group_id": None})
    with pytest.raises(UnsupportedVersion):
        wire.encode_response(0, 2, 1, {})


def test_lookups() -> None:
    assert wire.supported_versions(18) == (0, 5)
    assert wire.supported_versions(0) == (3, 13)
    assert wire.api_name(0) == "Produce"
    assert wire.api_name(18) == "ApiVersions"
    keys = wire.all_api_keys()
    assert keys == sorted(keys) and 0 in keys and 18 in keys
    assert 4 not in keys  # LeaderAndIsr: no valid versions left in Kafka 4
    with pytest.raises(UnsupportedVersion):
        wire.supported_versions(4)
    with pytest.raises(UnsupportedVersion):
        wire.api_name(-5)


def test_error_codes() -> None:
    assert ErrorCode.NONE == 0
    assert ErrorCode.UNKNOWN_SERVER_ERROR == -1
    assert ErrorCode.OFFSET_OUT_OF_RANGE == 1
    assert ErrorCode.CORRUPT_MESSAGE == 2
    assert ErrorCode.UNKNOWN_TOPIC_OR_PARTITION == 3
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER == 6
    assert ErrorCode.UNSUPPORTED_VERSION == 35
    assert ErrorCode.TOPIC_ALREADY_EXISTS == 36
    assert ErrorCode.INVALID_RECORD == 87
    assert ErrorCode.UNKNOWN_TOPIC_ID == 100
    assert [e.value for e in ErrorCode] == list(range(-1, 137))


def test_hand_written_header_decoder_agrees_with_schema() -> None:
    from wire.codec import message_decoder
    from wire.messages import REQUEST_HEADER

    assert [(f.name, f.type) for f in REQUEST_HEADER.fields] == [
        ("request_api_key", "int16"),
        ("request_api_version", "int16"),
        ("correlation_id", "int32"),
        ("client_id", "string"),
    ]
    for key, version, client_id in [(18, 3, "abc"), (18, 2, None), (0, 9, ""), (3, 12, "\u00e9")]:
        frame = wire.encode_request(key, version, 42, client_id, {})[4:]
        header = wire.decode_request_header(frame)
        schema_version = 2 if version in wire.messages.APIS[key].flexible else 1
        expected, end = message_decoder(REQUEST_HEADER, schema_version)(memoryview(frame), 0)
        assert header == wire.RequestHeader(
            expected["request_api_key"],
            expected["request_api_version"],
            expected["correlation_id"],
            expected["client_id"],
            end,
        )
