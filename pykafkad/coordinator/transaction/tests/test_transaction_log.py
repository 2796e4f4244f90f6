"""The ``__transaction_state`` record formats, against bytes laid out by hand from Kafka's schemas
(TransactionLogKey v0, TransactionLogValue v0 and v1)."""

from __future__ import annotations

import struct

import pytest

from pykafkad.coordinator.transaction.transaction_log import (
    StoredTransaction,
    TransactionLogError,
    decode_key,
    decode_value,
    key,
    partition_for,
    value,
)


def test_the_key_is_record_type_zero_then_the_id() -> None:
    assert key("tx-1") == b"\x00\x00\x00\x04tx-1"
    assert decode_key(key("tx-1")) == "tx-1"
    with pytest.raises(TransactionLogError):
        decode_key(b"\x00\x01\x00\x04tx-1")


def test_a_v0_value_written_by_kafka_decodes() -> None:
    raw = (struct.pack(">hqhib", 0, 4001, 3, 60000, 1)
           + struct.pack(">i", 1) + struct.pack(">h", 3) + b"out" + struct.pack(">iii", 2, 0, 2)
           + struct.pack(">qq", 1700000000123, 1700000000000))
    stored = decode_value(raw)
    assert (stored.producer_id, stored.producer_epoch, stored.timeout_ms, stored.state) == (4001, 3, 60000, 1)
    assert stored.partitions == {"out": [0, 2]}
    assert (stored.last_update_ms, stored.start_ms) == (1700000000123, 1700000000000)
    assert stored.previous_producer_id == -1


def test_v1_values_are_flexible_with_tagged_producer_ids() -> None:
    stored = StoredTransaction(4001, 3, 60000, 2, {"out": [2, 0], "in": [1]}, 20, 10, previous_producer_id=3999)
    raw = value(stored)
    expected = (struct.pack(">hqhib", 1, 4001, 3, 60000, 2)
                + bytes([3]) + bytes([3]) + b"in" + bytes([2]) + struct.pack(">i", 1) + bytes([0])
                + bytes([4]) + b"out" + bytes([3]) + struct.pack(">ii", 0, 2) + bytes([0])
                + struct.pack(">qq", 20, 10)
                + bytes([1, 0, 8]) + struct.pack(">q", 3999))
    assert raw == expected
    again = decode_value(raw)
    assert again.partitions == {"in": [1], "out": [0, 2]}
    assert again.previous_producer_id == 3999 and again.next_producer_id == -1


def test_an_empty_state_has_null_partitions_and_bad_values_are_refused() -> None:
    stored = StoredTransaction(7, 0, 1000, 0, None, 5, -1)
    assert decode_value(value(stored)).partitions is None
    with pytest.raises(TransactionLogError):
        decode_value(value(stored)[:-3])
    with pytest.raises(TransactionLogError):
        decode_value(struct.pack(">h", 9) + value(stored)[2:])


def test_ids_map_to_partitions_as_kafka_does() -> None:
    # Java's "tx-1".hashCode() is 3572520.
    assert partition_for("tx-1", 50) == 3572520 % 50
    assert 0 <= partition_for("a-much-longer-transactional-id", 50) < 50
