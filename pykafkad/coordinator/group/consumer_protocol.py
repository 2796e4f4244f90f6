"""The consumer's embedded protocol: the topics a member subscribes to (ConsumerProtocolSubscription)
and the partitions it is assigned (ConsumerProtocolAssignment).

The broker treats subscription and assignment bytes as opaque except here, where OffsetDelete
and offset expiry need to know which topics a consumer group still reads, and the admin API shows
each member's partitions.
"""

from __future__ import annotations

import struct

CONSUMER_PROTOCOL_TYPE = "consumer"


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
