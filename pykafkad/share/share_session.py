"""Share sessions (KIP-932): which partitions a share consumer fetches from this broker, under which
session epoch, on which connection.

A session is keyed by (group, member).  ShareFetch with epoch 0 opens one (dropping the member's
old one without releasing its records), each later ShareFetch or ShareAcknowledge must carry the
session's epoch and moves it on (to 1 after the largest int32), and epoch -1 closes it.  When the
connection that opened a session closes, the session goes and its member's records are released.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wire.error_codes import ErrorCode

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
_INT32_MAX = 2**31 - 1

SharePartitionKey = tuple[str, int]  # (topic name, partition index)


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= _INT32_MAX else epoch + 1


@dataclass
class ShareSession:
    group: str
    member: str
    connection: int
    epoch: int = 1
    # The session's partitions in fetch order; each (topic, index) with its topic id.
    partitions: dict[SharePartitionKey, object] = field(default_factory=dict)


class ShareSessions:
    """The broker's share sessions, at most ``limit`` of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._sessions: dict[tuple[str, str], ShareSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, group: str, member: str) -> ShareSession | None:
        return self._sessions.get((group, member))

    def open(self, group: str, member: str, connection: int) -> ShareSession | ErrorCode:
        """A new session for the member (its old one dropped), or SHARE_SESSION_LIMIT_REACHED."""
        key = (group, member)
        self._sessions.pop(key, None)
        if len(self._sessions) >= self.limit:
            return ErrorCode.SHARE_SESSION_LIMIT_REACHED
        session = self._sessions[key] = ShareSession(group, member, connection)
        return session

    def check(self, group: str, member: str, epoch: int) -> ShareSession | ErrorCode:
        """The session a request with ``epoch`` (not 0) continues: SHARE_SESSION_NOT_FOUND, or for a
        positive epoch not the session's, INVALID_SHARE_SESSION_EPOCH."""
        session = self._sessions.get((group, member))
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH
        return session

    def close(self, session: ShareSession) -> None:
        if self._sessions.get((session.group, session.member)) is session:
            del self._sessions[(session.group, session.member)]

    def has_group(self, group: str) -> bool:
        return any(g == group for g, _ in self._sessions)

    def of_connection(self, connection: int) -> list[ShareSession]:
        return [s for s in self._sessions.values() if s.connection == connection]
