"""The ``__consumer_offsets`` records of share groups (KIP-932), in Kafka's formats:
ShareGroupMemberMetadata (key type 10: a member's subscription and client), ShareGroupMetadata (11:
the group epoch), ShareGroupTargetAssignmentMetadata (12: the assignment epoch),
ShareGroupTargetAssignmentMember (13: a member's target partitions),
ShareGroupCurrentMemberAssignment (14: a member's epochs and partitions) and
ShareGroupStatePartitionMetadata (15: which partitions have share state).

Keys and values are laid out as the consumer-protocol group's (``consumer_group_records.py``), with
schemas transcribed from Kafka's group-coordinator message definitions.  ``StoredShareGroup`` is what
replaying a partition recovers of one share group; its actor rebuilds the ``ShareGroup`` from it, so
a new coordinator knows the group's members at their epochs and they carry on.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from pykafkad.coordinator.group.consumer_group_records import record_key
from wire.codec import message_decoder, message_encoder
from wire.schema import ArrayOf, Field, MessageSchema, Struct, Versions

MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_MEMBER, STATE_PARTITIONS = range(10, 16)
SHARE_RECORD_TYPES = frozenset(range(10, 16))
MEMBER_KEYED = frozenset({MEMBER_METADATA, TARGET_MEMBER, CURRENT_MEMBER})
STABLE = 0  # a share member's only state (MemberState.STABLE)

_V0 = Versions(0)


def _schema(name: str, *fields: Field) -> MessageSchema:
    return MessageSchema(name=name, valid=Versions(0, 0), flexible=_V0, fields=fields)


_TOPIC_PARTITIONS = ArrayOf(Struct("TopicPartitions", (
    Field("topic_id", "uuid", _V0),
    Field("partitions", ArrayOf("int32"), _V0),
)))
_TOPIC_PARTITIONS_INFO = ArrayOf(Struct("TopicPartitionsInfo", (
    Field("topic_id", "uuid", _V0),
    Field("topic_name", "string", _V0),
    Field("partitions", ArrayOf("int32"), _V0),
)))

VALUES: dict[int, MessageSchema] = {
    MEMBER_METADATA: _schema(
        "ShareGroupMemberMetadataValue",
        Field("rack_id", "string", _V0, nullable=_V0, default=None),
        Field("client_id", "string", _V0),
        Field("client_host", "string", _V0),
        Field("subscribed_topic_names", ArrayOf("string"), _V0),
    ),
    GROUP_METADATA: _schema(
        "ShareGroupMetadataValue",
        Field("epoch", "int32", _V0),
        Field("metadata_hash", "int64", _V0),
    ),
    TARGET_METADATA: _schema(
        "ShareGroupTargetAssignmentMetadataValue",
        Field("assignment_epoch", "int32", _V0),
        Field("assignment_timestamp", "int64", _V0, tag=0, tagged=_V0, default=0),
    ),
    TARGET_MEMBER: _schema(
        "ShareGroupTargetAssignmentMemberValue",
        Field("topic_partitions", _TOPIC_PARTITIONS, _V0),
    ),
    CURRENT_MEMBER: _schema(
        "ShareGroupCurrentMemberAssignmentValue",
        Field("member_epoch", "int32", _V0),
        Field("previous_member_epoch", "int32", _V0),
        Field("state", "int8", _V0),
        Field("assigned_partitions", _TOPIC_PARTITIONS, _V0),
    ),
    STATE_PARTITIONS: _schema(
        "ShareGroupStatePartitionMetadataValue",
        Field("initializing_topics", _TOPIC_PARTITIONS_INFO, _V0),
        Field("initialized_topics", _TOPIC_PARTITIONS_INFO, _V0),
        Field("deleting_topics", ArrayOf(Struct("TopicInfo", (
            Field("topic_id", "uuid", _V0),
            Field("topic_name", "string", _V0),
        ))), _V0),
    ),
}
_ENCODERS = {t: message_encoder(s, 0) for t, s in VALUES.items()}
_DECODERS = {t: message_decoder(s, 0) for t, s in VALUES.items()}


def share_record_key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    return record_key(record_type, group_id, member_id if record_type in MEMBER_KEYED else None)


def share_record_value(record_type: int, fields: dict[str, Any]) -> bytes:
    out = bytearray(b"\x00\x00")
    _ENCODERS[record_type](out, fields)
    return bytes(out)


def decode_share_value(record_type: int, data: bytes) -> dict[str, Any]:
    fields, _ = _DECODERS[record_type](memoryview(data), 2)
    return fields


@dataclass
class StoredShareGroup:
    """A share group as its records left it; per member, the latest value of each record."""

    epoch: int = 0
    assignment_epoch: int = 0
    member_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    current: dict[str, dict[str, Any]] = field(default_factory=dict)
    initialized: dict[uuid.UUID, set[int]] = field(default_factory=dict)

    def apply(self, record_type: int, member_id: str | None, value: bytes | None) -> None:
        """One record replayed (a None value is a tombstone)."""
        fields = None if value is None else decode_share_value(record_type, value)
        if record_type == GROUP_METADATA:
            self.epoch = fields["epoch"] if fields else 0
        elif record_type == TARGET_METADATA:
            self.assignment_epoch = fields["assignment_epoch"] if fields else 0
        elif record_type == STATE_PARTITIONS:
            self.initialized = {t["topic_id"]: set(t["partitions"]) for t in fields["initialized_topics"]} \
                if fields else {}
        elif record_type in MEMBER_KEYED and member_id is not None:
            table = {MEMBER_METADATA: self.member_metadata, TARGET_MEMBER: self.targets,
                     CURRENT_MEMBER: self.current}[record_type]
            if fields is None:
                table.pop(member_id, None)
            else:
                table[member_id] = fields
