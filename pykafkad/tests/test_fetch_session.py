"""The leader's fetch sessions: ids, epochs and their errors, and what a full cache gives up for a
new session (Kafka's FetchSessionCache rules)."""

from __future__ import annotations

import time

from pykafkad.replica import fetch_session
from pykafkad.replica.fetch_session import INT32_MAX, FetchSessions, SessionPartition, next_epoch
from wire.error_codes import ErrorCode


def _parts(n: int) -> dict:
    return {("t", i): SessionPartition(0, -1, -1, 1024) for i in range(n)}


def test_an_incremental_fetch_needs_the_session_its_fetcher_and_the_next_epoch() -> None:
    sessions = FetchSessions()
    session = sessions.open(2, False, _parts(1))
    assert session is not None and session.epoch == 1 and 1 <= session.session_id <= INT32_MAX
    assert sessions.incremental(session.session_id, 1, replica_id=2) is session
    assert sessions.incremental(session.session_id, 2, replica_id=2) == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert sessions.incremental(session.session_id, 1, replica_id=3) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    # A consumer (-1) cannot use a follower's session.
    assert sessions.incremental(session.session_id, 1, replica_id=-1) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    sessions.close(session.session_id)
    assert sessions.incremental(session.session_id, 1, replica_id=2) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_a_full_cache_gives_a_session_worth_less_for_one_worth_more() -> None:
    sessions = FetchSessions(max_sessions=2)
    small, big = sessions.open(-1, True, _parts(1)), sessions.open(-1, True, _parts(5))
    assert small is not None and big is not None
    # A consumer's session of 3 partitions takes the place of the one of 1, not of the one of 5.
    third = sessions.open(-1, True, _parts(3))
    assert third is not None and len(sessions) == 2
    assert sessions.incremental(small.session_id, 1, -1) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert sessions.incremental(big.session_id, 1, -1) is big
    # One worth no more than any held gets none: its fetcher goes on with full fetches.
    assert sessions.open(-1, True, _parts(2)) is None
    # A follower's session is worth more than any consumer's.
    follower = sessions.open(3, False, _parts(1))
    assert follower is not None
    assert sessions.incremental(third.session_id, 1, -1) == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_a_session_unused_for_two_minutes_goes_for_any_new_one() -> None:
    sessions = FetchSessions(max_sessions=1)
    follower = sessions.open(2, False, _parts(100))
    assert follower is not None
    assert sessions.open(-1, True, _parts(1)) is None
    follower.last_used = time.monotonic() - fetch_session.EVICTION_S - 1
    consumer = sessions.open(-1, True, _parts(1))
    assert consumer is not None and len(sessions) == 1


def test_no_slots_keeps_no_sessions() -> None:
    assert FetchSessions(max_sessions=0).open(2, False, _parts(1)) is None


def test_the_epoch_after_int32_max_is_one() -> None:
    assert next_epoch(1) == 2
    assert next_epoch(INT32_MAX) == 1
