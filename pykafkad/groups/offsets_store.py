"""The ``__consumer_offsets`` topic: Kafka's record formats for it, and reading and writing it.

Keys and values are laid out exactly as Kafka writes them, so Kafka's own tools could read
this topic: OffsetCommitKey v1 / OffsetCommitValue v3 for a committed offset,
GroupMetadataKey v2 / GroupMetadataValue v3 for a group's generation and members, and a
null value (tombstone) for a deletion.  A group lives in partition
``abs(javaHashCode(group_id)) % partitions``.  Records go through the Rust log as real
magic-2 batches (``_rust_log.encode_batch`` / ``decode_batches``; a small pure-Python codec
stands in while the extension lacks them).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pykafkad import _rust_log

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog

OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": "104857600"}

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(groupId.hashCode) % partitions`` (abs(MIN_VALUE) is 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


# -- primitive writers/readers (the non-flexible Kafka encodings) -------------------------------

def _str(s: str) -> bytes:
    b = s.encode()
    return _I16.pack(len(b)) + b


def _nstr(s: str | None) -> bytes:
    return _I16.pack(-1) if s is None else _str(s)


def _bytes(b: bytes | None) -> bytes:
    return _I32.pack(-1) if b is None else _I32.pack(len(b)) + b


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def i16(self) -> int:
        (v,) = _I16.unpack_from(self.data, self.pos)
        self.pos += 2
        return v

    def i32(self) -> int:
        (v,) = _I32.unpack_from(self.data, self.pos)
        self.pos += 4
        return v

    def i64(self) -> int:
        (v,) = _I64.unpack_from(self.data, self.pos)
        self.pos += 8
        return v

    def nstr(self) -> str | None:
        n = self.i16()
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def str(self) -> str:
        return self.nstr() or ""

    def nbytes(self) -> bytes | None:
        n = self.i32()
        if n < 0:
            return None
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(b)


# -- record schemas --------------------------------------------------------------------------------

@dataclass
class OffsetAndMetadata:
    """A committed offset as OffsetCommitValue carries it."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


@dataclass
class StoredMember:
    """One member as GroupMetadataValue carries it."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass
class StoredGroup:
    """A group's metadata record (GroupMetadataValue)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: list[StoredMember] = field(default_factory=list)


def offset_key(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey, key version 1."""
    return _I16.pack(1) + _str(group) + _str(topic) + _I32.pack(partition)


def offset_value(o: OffsetAndMetadata) -> bytes:
    """OffsetCommitValue v3."""
    return (_I16.pack(3) + _I64.pack(o.offset) + _I32.pack(o.leader_epoch) + _str(o.metadata)
            + _I64.pack(o.commit_timestamp))


def group_key(group: str) -> bytes:
    """GroupMetadataKey, key version 2."""
    return _I16.pack(2) + _str(group)


def group_value(g: StoredGroup) -> bytes:
    """GroupMetadataValue v3."""
    out = [_I16.pack(3), _str(g.protocol_type), _I32.pack(g.generation), _nstr(g.protocol), _nstr(g.leader),
           _I64.pack(g.current_state_timestamp), _I32.pack(len(g.members))]
    for m in g.members:
        out += [_str(m.member_id), _nstr(m.group_instance_id), _str(m.client_id), _str(m.client_host),
                _I32.pack(m.rebalance_timeout_ms), _I32.pack(m.session_timeout_ms),
                _bytes(m.subscription), _bytes(m.assignment)]
    return b"".join(out)


def decode_offset_value(data: bytes) -> OffsetAndMetadata:
    r = _Reader(data)
    version = r.i16()
    offset = r.i64()
    leader_epoch = r.i32() if version >= 3 else -1
    metadata = r.str()
    commit_ts = r.i64()
    return OffsetAndMetadata(offset, leader_epoch, metadata, commit_ts)


def decode_group_value(data: bytes) -> StoredGroup:
    r = _Reader(data)
    version = r.i16()
    protocol_type = r.str()
    generation = r.i32()
    protocol = r.nstr()
    leader = r.nstr()
    state_ts = r.i64() if version >= 2 else -1
    members = []
    for _ in range(r.i32()):
        member_id = r.str()
        instance_id = r.nstr() if version >= 3 else None
        client_id = r.str()
        client_host = r.str()
        rebalance_timeout = r.i32() if version >= 1 else 0
        session_timeout = r.i32()
        subscription = r.nbytes() or b""
        assignment = r.nbytes() or b""
        members.append(StoredMember(member_id, instance_id, client_id, client_host,
                                    rebalance_timeout or session_timeout, session_timeout, subscription, assignment))
    return StoredGroup(protocol_type, generation, protocol, leader, state_ts, members)


@dataclass
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass
class GroupKey:
    group: str


def decode_key(data: bytes) -> OffsetKey | GroupKey | None:
    """The key of a ``__consumer_offsets`` record; None for kinds this broker does not use."""
    r = _Reader(data)
    version = r.i16()
    if version in (0, 1):
        return OffsetKey(r.str(), r.str(), r.i32())
    if version == 2:
        return GroupKey(r.str())
    return None


# -- record batches --------------------------------------------------------------------------------

def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = z = 0
    while True:
        b = data[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (z >> 1) ^ -(z & 1), pos


def _py_encode_batch(records: list[tuple[bytes | None, bytes | None]], timestamp_ms: int) -> bytes:
    body = bytearray()
    for i, (key, value) in enumerate(records):
        rec = bytearray(b"\x00") + _varint(0) + _varint(i)
        rec += _varint(-1) if key is None else _varint(len(key)) + key
        rec += _varint(-1) if value is None else _varint(len(value)) + value
        rec += _varint(0)
        body += _varint(len(rec)) + rec
    after_crc = (struct.pack(">hiqqqhii", 0, len(records) - 1, timestamp_ms, timestamp_ms, -1, -1, -1,
                             len(records)) + bytes(body))
    header_rest = struct.pack(">ib", 0, 2) + struct.pack(">I", _crc32c(after_crc))
    batch_len = len(header_rest) + len(after_crc)
    return struct.pack(">qi", 0, batch_len) + header_rest + after_crc


def _py_decode_batches(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None]]:
    out: list[tuple[int, int, bytes | None, bytes | None]] = []
    for base_offset, batch in iter_batches(data):
        attributes, _, base_ts = struct.unpack_from(">hiq", batch, 21)
        if attributes & 0x07:
            raise ValueError("compressed batch in __consumer_offsets (needs _rust_log.decode_batches)")
        if attributes & 0x20:  # control batch
            continue
        (count,) = _I32.unpack_from(batch, 57)
        pos = 61
        for _ in range(count):
            _, pos = _read_varint(batch, pos)
            pos += 1
            ts_delta, pos = _read_varint(batch, pos)
            off_delta, pos = _read_varint(batch, pos)
            klen, pos = _read_varint(batch, pos)
            key = None if klen < 0 else bytes(batch[pos:pos + klen])
            pos += max(klen, 0)
            vlen, pos = _read_varint(batch, pos)
            value = None if vlen < 0 else bytes(batch[pos:pos + vlen])
            pos += max(vlen, 0)
            hcount, pos = _read_varint(batch, pos)
            for _ in range(hcount):
                hk, pos = _read_varint(batch, pos)
                pos += hk
                hv, pos = _read_varint(batch, pos)
                pos += max(hv, 0)
            out.append((base_offset + off_delta, base_ts + ts_delta, key, value))
    return out


def iter_batches(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(base offset, whole batch) for each complete batch in ``data``."""
    pos = 0
    while pos + 12 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        yield base_offset, data[pos:end]
        pos = end


def encode_batch(records: list[tuple[bytes | None, bytes | None]], timestamp_ms: int) -> bytes:
    rust = getattr(_rust_log, "encode_batch", None)
    return rust(records, timestamp_ms) if rust else _py_encode_batch(records, timestamp_ms)


def decode_batches(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None]]:
    rust = getattr(_rust_log, "decode_batches", None)
    return rust(data) if rust else _py_decode_batches(data)


def read_partition(plog: PartitionLog, chunk_bytes: int = 1 << 20) -> Iterator[tuple[bytes | None, bytes | None]]:
    """Every (key, value) of one ``__consumer_offsets`` partition, oldest first."""
    offset = plog.log_start_offset
    end = plog.log_end_offset
    while offset < end:
        data = plog.read(offset, chunk_bytes)
        if not data:
            break
        next_offset = offset
        for base_offset, batch in iter_batches(data):
            (last_delta,) = _I32.unpack_from(batch, 23)
            next_offset = max(next_offset, base_offset + last_delta + 1)
        for rec_offset, _ts, key, value in decode_batches(data):
            if rec_offset >= offset:
                yield key, value
        if next_offset <= offset:
            break
        offset = next_offset
