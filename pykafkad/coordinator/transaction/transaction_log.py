"""The ``__transaction_state`` topic: Kafka's record formats for it and the partition of an id.

A record's key is the int16 0 (Kafka's record type for the transaction log) and TransactionLogKey
v0, the transactional id; its value is TransactionLogValue, written at version 1 (flexible, with
the previous and next producer ids, the client's transaction version and the next epoch as tagged
fields, as Kafka after 4.1 writes them) and read at versions 0 and 1.  A null value (tombstone)
removes an expired id.  An id lives in partition ``abs(javaHashCode(id)) % partitions``, as a
group does in ``__consumer_offsets``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from pykafkad.java_hash import java_string_hash
from wire.errors import DecodeError
from wire.primitives import read_uvarint, write_uvarint

TRANSACTION_TOPIC = "__transaction_state"
TRANSACTION_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "uncompressed",
                             "unclean.leader.election.enable": "false", "segment.bytes": "104857600"}
KEY_VERSION = 0
VALUE_VERSION = 1

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
# Tagged fields of TransactionLogValue v1.
_TAG_PREVIOUS_PRODUCER_ID = 0
_TAG_NEXT_PRODUCER_ID = 1
_TAG_CLIENT_TRANSACTION_VERSION = 2
_TAG_NEXT_PRODUCER_EPOCH = 3


class TransactionLogError(ValueError):
    """A ``__transaction_state`` record that does not decode."""


def partition_for(transactional_id: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(transactionalId.hashCode) % partitions`` (abs(MIN_VALUE) is 0)."""
    h = java_string_hash(transactional_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


@dataclass
class StoredTransaction:
    """One TransactionLogValue: a transactional id's state as last written."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: int  # TransactionState's id (0 Empty .. 5 CompleteAbort)
    partitions: dict[str, list[int]] | None
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0
    next_producer_epoch: int = -1
    extra_tags: dict[int, bytes] = field(default_factory=dict)


def key(transactional_id: str) -> bytes:
    raw = transactional_id.encode()
    return _I16.pack(KEY_VERSION) + _I16.pack(len(raw)) + raw


def decode_key(data: bytes) -> str:
    if len(data) < 4:
        raise TransactionLogError(f"transaction log key of {len(data)} bytes")
    (version,) = _I16.unpack_from(data, 0)
    if version != KEY_VERSION:
        raise TransactionLogError(f"transaction log key version {version}")
    (n,) = _I16.unpack_from(data, 2)
    if n < 0 or 4 + n != len(data):
        raise TransactionLogError("transaction log key length does not match")
    return data[4:4 + n].decode()


def _compact_string(out: bytearray, s: str) -> None:
    raw = s.encode()
    write_uvarint(out, len(raw) + 1)
    out += raw


def value(t: StoredTransaction) -> bytes:
    """TransactionLogValue v1."""
    out = bytearray(_I16.pack(VALUE_VERSION))
    out += _I64.pack(t.producer_id) + _I16.pack(t.producer_epoch) + _I32.pack(t.timeout_ms) + _I8.pack(t.state)
    if t.partitions is None:
        write_uvarint(out, 0)
    else:
        write_uvarint(out, len(t.partitions) + 1)
        for topic, indexes in sorted(t.partitions.items()):
            _compact_string(out, topic)
            write_uvarint(out, len(indexes) + 1)
            for i in sorted(indexes):
                out += _I32.pack(i)
            write_uvarint(out, 0)  # no tagged fields per topic
    out += _I64.pack(t.last_update_ms) + _I64.pack(t.start_ms)
    tags: dict[int, bytes] = dict(t.extra_tags)
    if t.previous_producer_id != -1:
        tags[_TAG_PREVIOUS_PRODUCER_ID] = _I64.pack(t.previous_producer_id)
    if t.next_producer_id != -1:
        tags[_TAG_NEXT_PRODUCER_ID] = _I64.pack(t.next_producer_id)
    if t.client_transaction_version != 0:
        tags[_TAG_CLIENT_TRANSACTION_VERSION] = _I16.pack(t.client_transaction_version)
    if t.next_producer_epoch != -1:
        tags[_TAG_NEXT_PRODUCER_EPOCH] = _I16.pack(t.next_producer_epoch)
    write_uvarint(out, len(tags))
    for tag in sorted(tags):
        write_uvarint(out, tag)
        write_uvarint(out, len(tags[tag]))
        out += tags[tag]
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.view = memoryview(data)
        self.pos = 0

    def take(self, s: struct.Struct) -> int:
        if self.pos + s.size > len(self.view):
            raise TransactionLogError("transaction log value truncated")
        (v,) = s.unpack_from(self.view, self.pos)
        self.pos += s.size
        return v

    def uvarint(self) -> int:
        try:
            v, self.pos = read_uvarint(self.view, self.pos)
        except (IndexError, DecodeError) as e:
            raise TransactionLogError(f"transaction log value: {e}") from e
        return v

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.view):
            raise TransactionLogError("transaction log value truncated")
        b = bytes(self.view[self.pos:self.pos + n])
        self.pos += n
        return b

    def string(self, compact: bool) -> str:
        n = self.uvarint() - 1 if compact else self.take(_I16)
        if n < 0:
            raise TransactionLogError("null topic name in transaction log value")
        return self.raw(n).decode()

    def length(self, compact: bool) -> int:
        return self.uvarint() - 1 if compact else self.take(_I32)


def decode_value(data: bytes) -> StoredTransaction:
    """TransactionLogValue v0 or v1."""
    r = _Reader(data)
    version = r.take(_I16)
    if version not in (0, 1):
        raise TransactionLogError(f"transaction log value version {version}")
    flexible = version >= 1
    producer_id, epoch, timeout_ms, state = r.take(_I64), r.take(_I16), r.take(_I32), r.take(_I8)
    count = r.length(flexible)
    partitions: dict[str, list[int]] | None = None
    if count >= 0:
        partitions = {}
        for _ in range(count):
            topic = r.string(flexible)
            indexes = [r.take(_I32) for _ in range(max(0, r.length(flexible)))]
            partitions.setdefault(topic, []).extend(indexes)
            if flexible:
                for _ in range(r.uvarint()):
                    r.uvarint()
                    r.raw(r.uvarint())
    stored = StoredTransaction(producer_id, epoch, timeout_ms, state, partitions, r.take(_I64), r.take(_I64))
    if flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            payload = r.raw(size)
            if tag == _TAG_PREVIOUS_PRODUCER_ID and size == 8:
                stored.previous_producer_id = _I64.unpack(payload)[0]
            elif tag == _TAG_NEXT_PRODUCER_ID and size == 8:
                stored.next_producer_id = _I64.unpack(payload)[0]
            elif tag == _TAG_CLIENT_TRANSACTION_VERSION and size == 2:
                stored.client_transaction_version = _I16.unpack(payload)[0]
            elif tag == _TAG_NEXT_PRODUCER_EPOCH and size == 2:
                stored.next_producer_epoch = _I16.unpack(payload)[0]
            else:
                stored.extra_tags[tag] = payload
    if r.pos != len(data):
        raise TransactionLogError("trailing bytes after a transaction log value")
    return stored
