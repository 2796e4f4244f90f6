"""The leader's fetch sessions: ids, epochs and their errors, eviction of the least recently used."""

from __future__ import annotations

from pykafkad.replica.fetch_session import INT32_MAX, FetchSessions, next_epoch
from wire.error_codes import ErrorCode


def test_an_incremental_fetch_needs_the_session_its_follower_and_the_next_epoch() -> None:
    sessions = FetchSessions()
    session = sessions.open(replica_id=2)
    assert session.epoch == 1 and 1 <= session.session_id <= INT32_MAX
    assert sessions.incremental(session.session_id, 1, replica_id=2) is session
    assert sessions.incremental(session.session_id, 2, replica_id=2) == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert sessions.incremental(session.session_id, 1, replica_id=3) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    sessions.close(session.session_id)
    assert sessions.incremental(session.session_id, 1, replica_id=2) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_the_least_recently_used_session_goes_when_the_cache_is_full() -> None:
    sessions = FetchSessions(max_sessions=2)
    first, second = sessions.open(1), sessions.open(2)
    assert sessions.incremental(first.session_id, 1, 1) is first  # used: second is now the oldest
    third = sessions.open(3)
    assert len(sessions) == 2
    assert sessions.incremental(second.session_id, 1, 2) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert sessions.incremental(third.session_id, 1, 3) is third


def test_the_epoch_after_int32_max_is_one() -> None:
    assert next_epoch(1) == 2
    assert next_epoch(INT32_MAX) == 1
