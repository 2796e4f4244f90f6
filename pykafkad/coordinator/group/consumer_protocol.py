"""The consumer's embedded protocol: the topics a member subscribes to (ConsumerProtocolSubscription)
and the partitions it is assigned (ConsumerProtocolAssignment).

The broker treats subscription and assignment bytes as opaque except here, where OffsetDelete
and offset expiry need to know which topics a consumer group still reads, the admin API shows
each member's partitions, and a classic member of a consumer-protocol group (KIP-848's online
migration) is read its subscription and written its assignment by the coordinator itself.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from wire.codec import message_decoder, message_encoder
from wire.errors import DecodeError
from wire.schema import NEVER, ArrayOf, Field, MessageSchema, Struct, Versions

CONSUMER_PROTOCOL_TYPE = "consumer"
# The highest ConsumerProtocolSubscription / ConsumerProtocolAssignment version Kafka 4.4 defines; a
# later one is read as this one, as Kafka's ConsumerProtocol does (newer versions only add fields).
HIGHEST_VERSION = 3

_ALL = Versions(0)
_SUBSCRIPTION = MessageSchema("ConsumerProtocolSubscription", Versions(0, HIGHEST_VERSION), NEVER, (
    Field("topics", ArrayOf("string"), _ALL),
    Field("user_data", "bytes", _ALL, nullable=_ALL, default=None),
    Field("owned_partitions", ArrayOf(Struct("TopicPartition", (
        Field("topic", "string", _ALL),
        Field("partitions", ArrayOf("int32"), _ALL),
    ))), Versions(1)),
    Field("generation_id", "int32", Versions(2), default=-1),
    Field("rack_id", "string", Versions(3), nullable=Versions(3), default=None),
))
_ASSIGNMENT = MessageSchema("ConsumerProtocolAssignment", Versions(0, HIGHEST_VERSION), NEVER, (
    Field("assigned_partitions", ArrayOf(Struct("TopicPartition", (
        Field("topic", "string", _ALL),
        Field("partitions", ArrayOf("int32"), _ALL),
    ))), _ALL),
    Field("user_data", "bytes", _ALL, nullable=_ALL, default=None),
))
_SUBSCRIPTION_DECODERS = [message_decoder(_SUBSCRIPTION, v) for v in range(HIGHEST_VERSION + 1)]
_ASSIGNMENT_ENCODERS = [message_encoder(_ASSIGNMENT, v) for v in range(HIGHEST_VERSION + 1)]
_ASSIGNMENT_DECODERS = [message_decoder(_ASSIGNMENT, v) for v in range(HIGHEST_VERSION + 1)]


class MalformedProtocol(ValueError):
    """Embedded consumer protocol bytes that do not parse."""


@dataclass(frozen=True)
class Subscription:
    """A ConsumerProtocolSubscription: what a classic consumer subscribes to and owns."""

    version: int
    topics: list[str]
    owned_partitions: dict[str, list[int]]
    rack_id: str | None


def protocol_version(metadata: bytes) -> int:
    """The version a subscription (or assignment) is written in, capped at the highest known."""
    if len(metadata) < 2:
        raise MalformedProtocol("shorter than its version")
    (version,) = struct.unpack_from(">h", metadata, 0)
    if version < 0:
        raise MalformedProtocol(f"version {version}")
    return min(version, HIGHEST_VERSION)


def _decode(decoders: list[Any], data: bytes) -> tuple[int, dict[str, Any]]:
    version = protocol_version(data)
    try:
        fields, _ = decoders[version](memoryview(data), 2)
    except (DecodeError, struct.error, UnicodeDecodeError, IndexError) as e:
        raise MalformedProtocol(str(e)) from e
    return version, fields


def _by_topic(entries: list[dict[str, Any]] | None) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tp in entries or []:
        out.setdefault(tp["topic"], []).extend(tp["partitions"])
    return out


def decode_subscription(metadata: bytes) -> Subscription:
    """A classic member's subscription; MalformedProtocol when it does not parse."""
    version, fields = _decode(_SUBSCRIPTION_DECODERS, metadata)
    return Subscription(version, list(fields["topics"] or []), _by_topic(fields["owned_partitions"]),
                        fields["rack_id"])


def decode_assignment(assignment: bytes) -> dict[str, list[int]]:
    """A ConsumerProtocolAssignment's partitions by topic (none for empty bytes: a member whose
    assignment a rebalance reset); MalformedProtocol when it does not parse."""
    if not assignment:
        return {}
    return _by_topic(_decode(_ASSIGNMENT_DECODERS, assignment)[1]["assigned_partitions"])


def encode_assignment(partitions: dict[str, list[int]], version: int) -> bytes:
    """A ConsumerProtocolAssignment of ``partitions`` in ``version`` (the member's subscription's)."""
    version = min(max(version, 0), HIGHEST_VERSION)
    body: dict[str, Any] = {"assigned_partitions": [{"topic": t, "partitions": sorted(ps)}
                                                     for t, ps in sorted(partitions.items()) if ps],
                            "user_data": None}
    out = bytearray(struct.pack(">h", version))
    _ASSIGNMENT_ENCODERS[version](out, body)
    return bytes(out)


def subscribed_topics(subscription: bytes) -> set[str]:
    """Topics of a ConsumerProtocolSubscription (any version); empty if unreadable."""
    try:
        pos = 2  # version
        (count,) = struct.unpack_from(">i", subscription, pos)
        pos += 4
        topics = set()
        for _ in range(max(count, 0)):
            (n,) = struct.unpack_from(">h", subscription, pos)
            pos += 2
            topics.add(subscription[pos:pos + n].decode())
            pos += n
        return topics
    except (struct.error, UnicodeDecodeError):
        return set()


def assigned_partitions(assignment: bytes) -> dict[str, list[int]]:
    """Partitions of a ConsumerProtocolAssignment (any version), by topic; empty if unreadable."""
    try:
        pos = 2  # version
        (count,) = struct.unpack_from(">i", assignment, pos)
        pos += 4
        out: dict[str, list[int]] = {}
        for _ in range(max(count, 0)):
            (n,) = struct.unpack_from(">h", assignment, pos)
            pos += 2
            topic = assignment[pos:pos + n].decode()
            pos += n
            (partitions,) = struct.unpack_from(">i", assignment, pos)
            pos += 4
            out[topic] = list(struct.unpack_from(f">{max(partitions, 0)}i", assignment, pos))
            pos += 4 * max(partitions, 0)
        return out
    except (struct.error, UnicodeDecodeError):
        return {}
