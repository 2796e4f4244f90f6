"""The ``__consumer_offsets`` records of consumer-protocol groups (KIP-848), in Kafka's formats:
ConsumerGroupMetadata (key type 3: the group epoch), ConsumerGroupMemberMetadata (5: a member's
subscription and client), ConsumerGroupTargetAssignmentMetadata (6: the assignment epoch),
ConsumerGroupTargetAssignmentMember (7: a member's target partitions) and
ConsumerGroupCurrentMemberAssignment (8: a member's epochs, state and owned partitions).

A key is its record type (int16) then its fields, not flexible; a value is its version (int16, 0)
then a flexible body, encoded by ``wire``'s codec from the schemas below (transcribed from Kafka's
group-coordinator message definitions).  ``StoredConsumerGroup`` is what replaying a partition
recovers of one group; the group's actor rebuilds its ``ConsumerGroup`` from it, so a new coordinator
resumes every group where the old one left it: same epochs, same assignments, no rebalance.
"""

from __future__ import annotations

import hashlib
import struct
import uuid
from dataclasses import dataclass, field
from typing import Any

from wire.codec import message_decoder, message_encoder
from wire.schema import ArrayOf, Field, MessageSchema, Struct, Versions

GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_MEMBER = 3, 5, 6, 7, 8
CONSUMER_RECORD_TYPES = frozenset({GROUP_METADATA, 4, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER,
                                   CURRENT_MEMBER})
# Record types keyed by group and member (the others by group alone).
MEMBER_KEYED = frozenset({MEMBER_METADATA, TARGET_MEMBER, CURRENT_MEMBER})

_V0 = Versions(0)
_I16 = struct.Struct(">h")


def _schema(name: str, *fields: Field) -> MessageSchema:
    return MessageSchema(name=name, valid=Versions(0, 0), flexible=_V0, fields=fields)


_TOPIC_PARTITIONS = ArrayOf(Struct("TopicPartitions", (
    Field("topic_id", "uuid", _V0),
    Field("partitions", ArrayOf("int32"), _V0),
)))

VALUES: dict[int, MessageSchema] = {
    GROUP_METADATA: _schema(
        "ConsumerGroupMetadataValue",
        Field("epoch", "int32", _V0),
        Field("metadata_hash", "int64", _V0, tag=0, tagged=_V0, default=0),
    ),
    MEMBER_METADATA: _schema(
        "ConsumerGroupMemberMetadataValue",
        Field("instance_id", "string", _V0, nullable=_V0, default=None),
        Field("rack_id", "string", _V0, nullable=_V0, default=None),
        Field("client_id", "string", _V0),
        Field("client_host", "string", _V0),
        Field("subscribed_topic_names", ArrayOf("string"), _V0),
        Field("subscribed_topic_regex", "string", _V0, nullable=_V0, default=None),
        Field("rebalance_timeout_ms", "int32", _V0, default=-1),
        Field("server_assignor", "string", _V0, nullable=_V0, default=None),
        # Set for a member that speaks the classic protocol to the consumer group (null otherwise).
        Field("classic_member_metadata", Struct("ClassicMemberMetadata", (
            Field("session_timeout_ms", "int32", _V0),
            Field("supported_protocols", ArrayOf(Struct("ClassicProtocol", (
                Field("name", "string", _V0),
                Field("metadata", "bytes", _V0),
            ))), _V0),
        )), _V0, nullable=_V0, tag=0, tagged=_V0, default=None),
    ),
    TARGET_METADATA: _schema(
        "ConsumerGroupTargetAssignmentMetadataValue",
        Field("assignment_epoch", "int32", _V0),
    ),
    TARGET_MEMBER: _schema(
        "ConsumerGroupTargetAssignmentMemberValue",
        Field("topic_partitions", _TOPIC_PARTITIONS, _V0),
    ),
    CURRENT_MEMBER: _schema(
        "ConsumerGroupCurrentMemberAssignmentValue",
        Field("member_epoch", "int32", _V0),
        Field("previous_member_epoch", "int32", _V0),
        Field("state", "int8", _V0),
        Field("assigned_partitions", _TOPIC_PARTITIONS, _V0),
        Field("partitions_pending_revocation", _TOPIC_PARTITIONS, _V0),
    ),
}
_ENCODERS = {t: message_encoder(s, 0) for t, s in VALUES.items()}
_DECODERS = {t: message_decoder(s, 0) for t, s in VALUES.items()}


def _str(s: str) -> bytes:
    b = s.encode()
    return _I16.pack(len(b)) + b


def record_key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    key = _I16.pack(record_type) + _str(group_id)
    return key + _str(member_id) if member_id is not None else key


def record_value(record_type: int, fields: dict[str, Any]) -> bytes:
    out = bytearray(_I16.pack(0))
    _ENCODERS[record_type](out, fields)
    return bytes(out)


def decode_key(data: bytes, member_keyed: frozenset[int] = MEMBER_KEYED) -> tuple[int, str, str | None]:
    """(record type, group id, member id or None) of a consumer-group record key (``member_keyed``:
    the record types keyed by member too; a share group's are others)."""
    (record_type,) = _I16.unpack_from(data, 0)
    pos = 2
    (n,) = _I16.unpack_from(data, pos)
    group_id = data[pos + 2:pos + 2 + n].decode()
    pos += 2 + n
    member_id = None
    if record_type in member_keyed:
        (n,) = _I16.unpack_from(data, pos)
        member_id = data[pos + 2:pos + 2 + n].decode()
    return record_type, group_id, member_id


def decode_value(record_type: int, data: bytes) -> dict[str, Any]:
    fields, _ = _DECODERS[record_type](memoryview(data), 2)
    return fields


@dataclass
class StoredConsumerGroup:
    """A consumer-protocol group as its records left it; per member, the latest value of each record."""

    epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    member_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    current: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def members(self) -> list[str]:
        return list(self.member_metadata)

    def apply(self, record_type: int, member_id: str | None, value: bytes | None) -> None:
        """One record replayed (a None value is a tombstone)."""
        fields = None if value is None else decode_value(record_type, value)
        if record_type == GROUP_METADATA:
            self.epoch = fields["epoch"] if fields else 0
            self.metadata_hash = fields["metadata_hash"] if fields else 0
        elif record_type == TARGET_METADATA:
            self.assignment_epoch = fields["assignment_epoch"] if fields else 0
        elif record_type in MEMBER_KEYED and member_id is not None:
            table = {MEMBER_METADATA: self.member_metadata, TARGET_MEMBER: self.targets,
                     CURRENT_MEMBER: self.current}[record_type]
            if fields is None:
                table.pop(member_id, None)
            else:
                table[member_id] = fields


def metadata_hash(metadata: dict[str, tuple[uuid.UUID, int]]) -> int:
    """A signed 64-bit digest of the subscribed topics' ids and partition counts: a coordinator that
    loads the group tells from it whether the topics changed while nobody coordinated it."""
    digest = hashlib.blake2b(repr(sorted(metadata.items())).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True) if metadata else 0


def topic_partitions(assignment: dict[uuid.UUID, set[int]]) -> list[dict[str, Any]]:
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(assignment.items(), key=lambda i: str(i[0]))
            if ps]


def assignment_of(entries: list[dict[str, Any]]) -> dict[uuid.UUID, set[int]]:
    return {e["topic_id"]: set(e["partitions"]) for e in entries if e["partitions"]}
