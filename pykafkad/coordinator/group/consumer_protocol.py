"""The consumer's embedded protocol (ConsumerProtocolSubscription): the topics a member subscribes to.

The broker treats subscription and assignment bytes as opaque except here, where OffsetDelete
and offset expiry need to know which topics a consumer group still reads.
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
