"""Fetch sessions (KIP-227) on the leader, for its followers and for consumers.

A fetcher asks for every partition it reads from this broker in each request.  With a session,
only the first request (epoch 0) names them all; the leader keeps them, and each later request
(epochs 1, 2, ...) names only the partitions whose fetch position changed, and those to forget.
The answer carries only the partitions with something new for the fetcher: records, an error, a
divergence, or watermarks (high watermark, last stable offset, log start offset) other than those
it was last sent.  A fetch round trip then costs what changed, not what is read.

The cache holds ``max.incremental.fetch.session.cache.slots`` sessions.  When it is full, a new
session takes the place of one unused for two minutes, else of one worth less than itself (a
consumer's before a follower's, fewer partitions before more), as Kafka's FetchSessionCache
evicts; failing both, the fetch is answered without a session (id 0) and its fetcher goes on with
full fetches.
"""

from __future__ import annotations

import random
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from wire.error_codes import ErrorCode

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
INT32_MAX = 2**31 - 1
# Kafka's max.incremental.fetch.session.cache.slots default.
MAX_SESSIONS = 1000
# Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: a session unused this long may be evicted by
# any new one.
EVICTION_S = 120.0

# A session's partitions are keyed by (topic name, index) in requests before version 13 and by
# (topic id, index) from 13 on, as the requests name them.
TopicKey = str | uuid.UUID


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: 1 follows INT32_MAX (0 would open a new session)."""
    return 1 if epoch >= INT32_MAX else epoch + 1


@dataclass
class SessionPartition:
    """What the fetcher last said of a partition, and the watermarks it was last sent."""

    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int
    max_bytes: int
    # A follower's log start offset as it last reported it (DeleteRecords waits on it); -1 for a consumer.
    log_start_offset: int = -1
    # (high watermark, last stable offset, log start offset) of the last answer that carried the
    # partition without an error.
    sent: tuple[int, int, int] | None = None


@dataclass
class FetchSession:
    session_id: int
    # The follower's broker id, or -1 for a consumer's session.
    replica_id: int
    by_id: bool = False
    # The epoch the next incremental request must carry.
    epoch: int = 1
    last_used: float = field(default_factory=time.monotonic)
    partitions: dict[tuple[TopicKey, int], SessionPartition] = field(default_factory=dict)
    # The partitions as a full request's topics, kept until a request changes them: an idle
    # consumer's incremental fetches name nothing, and rebuilding thousands of them each time
    # was a tenth of what such a fetch cost.
    request_topics: list[dict[str, Any]] | None = None
    # Each partition's entry in ``request_topics``: a request that only moves the positions of
    # partitions already here (a follower's, on every fetch) updates these in place.
    request_parts: dict[tuple[TopicKey, int], dict[str, Any]] = field(default_factory=dict)
    # A follower's session: when (epoch ms) its next fetch records every partition's position, the
    # ones its request leaves unchanged too (ReplicaManager.position_refresh_ms).
    positions_due_ms: int = 0

    @property
    def privileged(self) -> bool:
        return self.replica_id >= 0

    def worth(self) -> tuple[bool, int]:
        """What a session is worth against another when the cache is full."""
        return self.privileged, len(self.partitions)


class FetchSessions:
    """The sessions this leader holds, least recently used first."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[int, FetchSession] = OrderedDict()
        self._max = max_sessions

    def __len__(self) -> int:
        return len(self._sessions)

    def partitions_cached(self) -> int:
        return sum(len(s.partitions) for s in self._sessions.values())

    def open(self, replica_id: int, by_id: bool, partitions: dict[tuple[TopicKey, int], SessionPartition]
             ) -> FetchSession | None:
        """A new session of ``partitions`` for ``replica_id`` (-1: a consumer), or None when the cache is
        full and holds nothing it may evict for it."""
        session = FetchSession(0, replica_id, by_id, partitions=partitions)
        if self._max <= 0 or (len(self._sessions) >= self._max and not self._evict_for(session)):
            return None
        session_id = random.randint(1, INT32_MAX)
        while session_id in self._sessions:
            session_id = random.randint(1, INT32_MAX)
        session.session_id = session_id
        self._sessions[session_id] = session
        return session

    def _evict_for(self, new: FetchSession) -> bool:
        oldest = next(iter(self._sessions.values()))
        if oldest.last_used < time.monotonic() - EVICTION_S:
            del self._sessions[oldest.session_id]
            return True
        cheapest = min(self._sessions.values(), key=FetchSession.worth)
        if cheapest.worth() < new.worth():
            del self._sessions[cheapest.session_id]
            return True
        return False

    def close(self, session_id: int) -> None:
        self._sessions.pop(session_id, None)

    def incremental(self, session_id: int, epoch: int, replica_id: int) -> FetchSession | ErrorCode:
        """The session an incremental request names, or Kafka's error for it."""
        session = self._sessions.get(session_id)
        if session is None or session.replica_id != replica_id:
            return ErrorCode.FETCH_SESSION_ID_NOT_FOUND
        if epoch != session.epoch:
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH
        self._sessions.move_to_end(session_id)
        session.last_used = time.monotonic()
        return session
