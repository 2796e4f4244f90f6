"""The ``__consumer_offsets`` topic: Kafka's record formats for it, and reading and writing it.

Keys and values are laid out exactly as Kafka writes them, so Kafka's own tools could read
this topic: OffsetCommitKey v1 / OffsetCommitValue v3 for a committed offset,
GroupMetadataKey v2 / GroupMetadataValue v3 for a group's generation and members, and a
null value (tombstone) for a deletion.  A group lives in partition
``abs(javaHashCode(group_id)) % partitions``.  Records go through the Rust log as real
magic-2 batches built and read by the Rust core (``internal_topic_log``).  Transactional offsets
(TxnOffsetCommit) count once their transaction's COMMIT marker is in the partition.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pykafkad.coordinator.group.consumer_group_records import CONSUMER_RECORD_TYPES, GROUP_METADATA, StoredConsumerGroup
from pykafkad.coordinator.group.consumer_group_records import decode_key as decode_consumer_key
from pykafkad.coordinator.group.share_group_records import GROUP_METADATA as SHARE_GROUP_METADATA
from pykafkad.coordinator.group.share_group_records import MEMBER_KEYED as SHARE_MEMBER_KEYED
from pykafkad.coordinator.group.share_group_records import SHARE_RECORD_TYPES, StoredShareGroup
from pykafkad.coordinator.internal_topic_log import read_partition
from pykafkad.java_hash import java_string_hash

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog

OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": "104857600"}

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


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

LoadedGroups = dict[str, tuple[StoredGroup | StoredConsumerGroup | StoredShareGroup | None,
                               dict[tuple[str, int], OffsetAndMetadata]]]
# Transactional offsets whose transaction is still open: group -> producer id -> offsets.
PendingOffsets = dict[str, dict[int, dict[tuple[str, int], OffsetAndMetadata]]]


def read_groups(plog: PartitionLog) -> tuple[LoadedGroups, PendingOffsets, int]:
    """Replay one ``__consumer_offsets`` partition: each group's last metadata record and its live
    committed offsets (tombstones applied; transactional offsets once their COMMIT marker is read,
    never when it is ABORT), the transactional offsets of transactions still open, and how many
    records were read.  Touches nothing but the log, so it runs on a worker thread."""
    groups: LoadedGroups = {}
    open_txns: dict[int, list[tuple[OffsetKey, bytes | None]]] = {}
    records = 0
    for rec in read_partition(plog):
        if rec.control:
            ended = open_txns.pop(rec.producer_id, [])
            if rec.commit:
                for k, v in ended:
                    _apply_offset(groups, k, v)
            continue
        if rec.key is None:
            continue
        records += 1
        if len(rec.key) >= 2 and _I16.unpack_from(rec.key, 0)[0] in CONSUMER_RECORD_TYPES:
            _apply_consumer_record(groups, rec.key, rec.value)
            continue
        if len(rec.key) >= 2 and _I16.unpack_from(rec.key, 0)[0] in SHARE_RECORD_TYPES:
            _apply_share_record(groups, rec.key, rec.value)
            continue
        k = decode_key(rec.key)
        if isinstance(k, OffsetKey):
            if rec.transactional:
                open_txns.setdefault(rec.producer_id, []).append((k, rec.value))
            else:
                _apply_offset(groups, k, rec.value)
        elif isinstance(k, GroupKey):
            _, offsets = groups.setdefault(k.group, (None, {}))
            groups[k.group] = (None if rec.value is None else decode_group_value(rec.value), offsets)
    pending: PendingOffsets = {}
    for producer_id, written in open_txns.items():
        for k, v in written:
            if v is not None:
                by_producer = pending.setdefault(k.group, {}).setdefault(producer_id, {})
                by_producer[(k.topic, k.partition)] = decode_offset_value(v)
                groups.setdefault(k.group, (None, {}))
    return groups, pending, records


def _apply_consumer_record(groups: LoadedGroups, key: bytes, value: bytes | None) -> None:
    """A consumer-protocol group's record: its group's stored state follows it; the group metadata's
    tombstone deletes the group (its other records were tombstoned before it)."""
    record_type, group_id, member_id = decode_consumer_key(key)
    stored, offsets = groups.setdefault(group_id, (None, {}))
    if record_type == GROUP_METADATA and value is None:
        groups[group_id] = (None, offsets)
        return
    if not isinstance(stored, StoredConsumerGroup):
        if value is None:
            return  # a deleted group's remaining tombstones
        stored = StoredConsumerGroup()
        groups[group_id] = (stored, offsets)
    if record_type != 4:  # ConsumerGroupPartitionMetadata: Kafka's older topic metadata, unused here
        stored.apply(record_type, member_id, value)


def _apply_share_record(groups: LoadedGroups, key: bytes, value: bytes | None) -> None:
    """A share group's record, as ``_apply_consumer_record``; the ShareGroupMetadata tombstone deletes it."""
    record_type, group_id, member_id = decode_consumer_key(key, SHARE_MEMBER_KEYED)
    stored, offsets = groups.setdefault(group_id, (None, {}))
    if record_type == SHARE_GROUP_METADATA and value is None:
        groups[group_id] = (None, offsets)
        return
    if not isinstance(stored, StoredShareGroup):
        if value is None:
            return
        stored = StoredShareGroup()
        groups[group_id] = (stored, offsets)
    stored.apply(record_type, member_id, value)


def _apply_offset(groups: LoadedGroups, k: OffsetKey, value: bytes | None) -> None:
    _, offsets = groups.setdefault(k.group, (None, {}))
    if value is None:
        offsets.pop((k.topic, k.partition), None)
    else:
        offsets[(k.topic, k.partition)] = decode_offset_value(value)
