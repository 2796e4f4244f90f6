"""Fetch sessions (KIP-227) on the leader, for its followers.

A follower fetches every partition it follows from this leader in each request.  With a session,
only the first request (epoch 0) names them all; the leader keeps them, and each later request
(epochs 1, 2, ...) names only the partitions whose fetch position changed, and those to forget.
The answer carries only the partitions with something new for the follower: records, an error, a
divergence, or watermarks other than those it was last sent.  A replication round trip then costs
what changed, not what is followed.

Clients' fetches do not open sessions (yet): they are answered session id 0, which tells them to
go on with full fetches.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from wire.error_codes import ErrorCode

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
INT32_MAX = 2**31 - 1
# Kafka's max.incremental.fetch.session.cache.slots default; here only followers hold sessions,
# a few per broker, so the bound only matters against a misbehaving peer.
MAX_SESSIONS = 1000
# A follower uses its session every replica.fetch.wait.max.ms at most; one idle this long belongs to
# a fetcher that is gone (its broker restarted, its link broke), and goes when a new one opens.
IDLE_S = 60.0


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch``: 1 follows INT32_MAX (0 would open a new session)."""
    return 1 if epoch >= INT32_MAX else epoch + 1


@dataclass
class SessionPartition:
    """What the follower last said of a partition, and the watermarks it was last sent."""

    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int
    max_bytes: int
    # (high watermark, log start offset) of the last answer that carried the partition.
    sent: tuple[int, int] | None = None


@dataclass
class FetchSession:
    session_id: int
    replica_id: int
    # The epoch the next incremental request must carry.
    epoch: int = 1
    last_used: float = field(default_factory=time.monotonic)
    partitions: dict[tuple[str, int], SessionPartition] = field(default_factory=dict)


class FetchSessions:
    """The sessions this leader holds, least recently used first."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[int, FetchSession] = OrderedDict()
        self._max = max_sessions

    def __len__(self) -> int:
        return len(self._sessions)

    def partitions_cached(self) -> int:
        return sum(len(s.partitions) for s in self._sessions.values())

    def open(self, replica_id: int) -> FetchSession:
        """A new session for follower ``replica_id`` (its partitions are added by the caller)."""
        now = time.monotonic()
        while self._sessions and (len(self._sessions) >= self._max
                                  or next(iter(self._sessions.values())).last_used < now - IDLE_S):
            self._sessions.popitem(last=False)
        session_id = random.randint(1, INT32_MAX)
        while session_id in self._sessions:
            session_id = random.randint(1, INT32_MAX)
        session = self._sessions[session_id] = FetchSession(session_id, replica_id)
        return session

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
