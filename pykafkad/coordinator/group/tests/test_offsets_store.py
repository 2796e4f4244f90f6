"""Unit tests of the ``__consumer_offsets`` formats: Java hash partitioning, record schemas, batches."""

from __future__ import annotations

from pykafkad import _rust_log
from pykafkad.coordinator.group import offsets_store as s
from pykafkad.coordinator.internal_topic_log import encode_batch


def test_java_string_hash_and_partition() -> None:
    # Values of Java's "...".hashCode().
    assert s.java_string_hash("hello") == 99162322
    assert s.java_string_hash("") == 0
    assert s.java_string_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE
    assert s.partition_for("hello", 50) == 22
    assert s.partition_for("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0


def test_offset_and_group_records_round_trip() -> None:
    key = s.offset_key("g", "t", 3)
    assert s.decode_key(key) == s.OffsetKey("g", "t", 3)
    o = s.OffsetAndMetadata(42, 7, "meta", 1234)
    assert s.decode_offset_value(s.offset_value(o)) == o
    g = s.StoredGroup("consumer", 5, "range", "m1", 99, [
        s.StoredMember("m1", None, "c", "/127.0.0.1", 300000, 10000, b"sub", b"asg"),
        s.StoredMember("m2", "i2", "c", "/127.0.0.1", 300000, 10000, b"", b"")])
    assert s.decode_key(s.group_key("g")) == s.GroupKey("g")
    assert s.decode_group_value(s.group_value(g)) == g


def test_batch_codec_round_trip() -> None:
    records = [(b"k1", b"v1"), (b"k2", None), (None, b"v3")]
    decoded = _rust_log.decode_batches(encode_batch(records, 1000))
    assert [(k, v) for _, _, k, v, _ in decoded] == records
    assert [(o, t) for o, t, _, _, _ in decoded] == [(0, 1000), (1, 1000), (2, 1000)]
