"""SharePartition's states and offsets, without a broker: acquisition of whole batches, the start
offset moving past done records, acknowledgements and their refusals, releases, lock expiry and the
delivery limit, and runs staying few however many records are in flight."""

from __future__ import annotations

import struct

import pytest

from pykafkad.share.share_partition import (
    ACCEPT,
    ACKNOWLEDGED,
    ACQUIRED,
    ARCHIVING,
    AVAILABLE,
    DELIVERY_COUNT_EXCEEDED,
    GAP,
    REJECT,
    REJECTED,
    RELEASE,
    RENEW,
    AcknowledgeError,
    SharePartition,
    SharePartitionLimits,
    aborted_batches,
)
from wire.error_codes import ErrorCode

LIMITS = SharePartitionLimits(delivery_count_limit=3, max_record_locks=2000, lock_duration_ms=30_000)


def batches(*ranges: tuple[int, int]) -> list[tuple[int, int, int]]:
    """Log batches as a read returns them (the byte ends do not matter here)."""
    return [(first, last, 0) for first, last in ranges]


def test_new_records_are_acquired_in_whole_batches_past_max_records() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    got = share.acquire("a", batches((0, 9), (10, 19)), max_records=5, limits=LIMITS, now=0.0)
    assert got == [(0, 9, 1)]
    assert (share.start_offset, share.end_offset) == (0, 10)
    assert share.acquire("b", batches((10, 19)), max_records=500, limits=LIMITS, now=0.0) == [(10, 19, 1)]


def test_accepting_moves_the_start_offset_and_forgets_done_records() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 9)), 500, LIMITS, 0.0)
    share.acknowledge("a", 0, 4, [ACCEPT], LIMITS)
    assert share.start_offset == 5
    share.acknowledge("a", 7, 9, [ACCEPT], LIMITS)
    assert share.start_offset == 5  # 5 and 6 are still acquired
    share.acknowledge("a", 5, 6, [ACCEPT], LIMITS)
    assert (share.start_offset, share.runs) == (10, [])


def test_release_makes_records_available_again_and_counts_deliveries_up_to_the_limit() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    assert share.acquire("a", batches((0, 0), (1, 1)), 500, LIMITS, 0.0) == [(0, 1, 1)]
    share.acknowledge("a", 0, 1, [RELEASE, ACCEPT], LIMITS)
    assert [(r.first, r.state) for r in share.runs] == [(0, AVAILABLE), (1, ACKNOWLEDGED)]
    assert share.next_fetch_offset() == 0
    assert share.acquire("b", batches((0, 0), (1, 1)), 500, LIMITS, 0.0) == [(0, 0, 2)]
    assert share.release_owner("b", LIMITS) == 1
    assert share.acquire("c", batches((0, 0), (1, 1)), 500, LIMITS, 0.0) == [(0, 0, 3)]
    share.acknowledge("c", 0, 0, [RELEASE], LIMITS)
    # Released after its third delivery: archived, and the start offset passes it.
    assert (share.start_offset, share.runs) == (2, [])


def test_per_offset_types_reject_and_gap_archive() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 3)), 500, LIMITS, 0.0)
    share.acknowledge("a", 0, 3, [ACCEPT, REJECT, GAP, RELEASE], LIMITS)
    assert share.start_offset == 3
    assert [(r.first, r.last, r.state) for r in share.runs] == [(3, 3, AVAILABLE)]


def test_refused_acknowledgements_change_nothing() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 4)), 500, LIMITS, 0.0)
    with pytest.raises(AcknowledgeError) as owner:
        share.acknowledge("b", 0, 4, [ACCEPT], LIMITS)
    assert owner.value.code == ErrorCode.INVALID_RECORD_STATE
    with pytest.raises(AcknowledgeError) as past:
        share.acknowledge("a", 3, 8, [ACCEPT], LIMITS)
    assert past.value.code == ErrorCode.INVALID_REQUEST
    share.acknowledge("a", 3, 3, [ACCEPT], LIMITS)
    with pytest.raises(AcknowledgeError) as twice:
        share.acknowledge("a", 3, 3, [ACCEPT], LIMITS)
    assert twice.value.code == ErrorCode.INVALID_RECORD_STATE
    share.acknowledge("a", 0, 0, [ACCEPT], LIMITS)
    # Below the start offset: already done, accepted silently.
    share.acknowledge("a", 0, 0, [ACCEPT], LIMITS)
    assert [(r.first, r.last, r.state) for r in share.runs] == [(1, 2, ACQUIRED), (3, 3, ACKNOWLEDGED),
                                                                 (4, 4, ACQUIRED)]


def test_an_owner_s_records_are_released_and_locks_expire() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 4)), 500, LIMITS, now=0.0)
    share.acquire("b", batches((5, 9)), 500, LIMITS, now=10.0)
    assert share.release_owner("a", LIMITS) == 5
    assert share.next_deadline() == 40.0
    assert share.expire_locks(39.9, LIMITS) == 0
    assert share.expire_locks(40.0, LIMITS) == 5
    assert [(r.first, r.last, r.state, r.delivery_count) for r in share.runs] == [(0, 9, AVAILABLE, 1)]
    # Re-acquired: only what the read covers.
    assert share.acquire("c", batches((0, 4)), 500, LIMITS, 50.0) == [(0, 4, 2)]


def test_in_flight_records_are_bounded_by_the_record_locks() -> None:
    limits = SharePartitionLimits(delivery_count_limit=5, max_record_locks=100, lock_duration_ms=1000)
    share = SharePartition("g", "t", 0, start_offset=0)
    assert share.acquire("a", batches((0, 99), (100, 199)), 500, limits, 0.0) == [(0, 99, 1)]
    assert not share.can_acquire(limits)
    share.acknowledge("a", 0, 49, [ACCEPT], limits)
    assert share.can_acquire(limits)


def test_the_log_start_moving_archives_what_it_passes() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 9)), 500, LIMITS, 0.0)
    share.move_start(5)
    assert share.start_offset == 5
    assert [(r.first, r.last) for r in share.runs] == [(5, 9)]


def test_a_million_records_in_flight_are_a_few_runs() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    limits = SharePartitionLimits(delivery_count_limit=5, max_record_locks=2_000_000, lock_duration_ms=1000)
    share.acquire("a", batches(*[(i * 1000, i * 1000 + 999) for i in range(1000)]), 10**7, limits, 0.0)
    assert share.in_flight() == 1_000_000
    assert len(share.runs) == 1
    share.acknowledge("a", 500_000, 500_000, [RELEASE], limits)
    assert len(share.runs) == 3


def test_records_released_by_the_fetch_asking_are_held_back_from_it() -> None:
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 4)), 500, LIMITS, 0.0)
    share.acknowledge("a", 0, 4, [ACCEPT, ACCEPT, RELEASE, RELEASE, RELEASE], LIMITS)
    got = share.acquire("a", batches((0, 4), (5, 9)), 500, LIMITS, 0.0, held_back=((2, 4),))
    assert got == [(5, 9, 1)]
    assert share.acquire("b", batches((0, 4), (5, 9)), 500, LIMITS, 0.0) == [(2, 4, 2)]


def test_with_a_dead_letter_topic_rejected_and_exhausted_records_wait_to_be_written() -> None:
    limits = SharePartitionLimits(delivery_count_limit=1, max_record_locks=2000, lock_duration_ms=1000,
                                  dead_letters=True)
    share = SharePartition("g", "t", 0, start_offset=0)
    share.acquire("a", batches((0, 2)), 500, limits, 0.0)
    share.acknowledge("a", 0, 2, [REJECT, ACCEPT, RELEASE], limits)
    assert share.dead_letters() == [(0, 0, 1, REJECTED), (2, 2, 1, DELIVERY_COUNT_EXCEEDED)]
    assert share.start_offset == 0 and share.first_available() is None
    assert [b[2] for b in share.persisted_state()[0]] == [ARCHIVING, ACKNOWLEDGED, ARCHIVING]
    share.dead_lettered(0, 0)
    share.dead_lettered(2, 2)
    assert (share.start_offset, share.dead_letters()) == (3, [])


def _header(base: int, last: int, producer_id: int, transactional: bool = False, control: bool = False) -> bytes:
    """A record batch's header alone (no records): what aborted_batches reads."""
    attributes = (0x10 if transactional else 0) | (0x20 if control else 0)
    after_length = struct.pack(">ibIhiqqqhii", 0, 2, 0, attributes, last - base, 0, 0, producer_id, 0, 0, 0)
    return struct.pack(">qi", base, len(after_length)) + after_length


def test_the_batches_of_aborted_transactions_are_found_up_to_their_markers() -> None:
    read = b"".join([
        _header(0, 1, -1),                            # not transactional
        _header(2, 3, 7, transactional=True),          # producer 7: aborted
        _header(4, 5, 8, transactional=True),          # producer 8: committed
        _header(6, 6, 7, transactional=True),          # producer 7: still aborted
        _header(7, 7, 7, control=True),                # its abort marker
        _header(8, 8, 8, control=True),                # 8's commit marker
        _header(9, 10, 7, transactional=True),         # producer 7 again: a committed transaction
        _header(11, 11, 7, control=True),
    ])
    assert aborted_batches(read, [(7, 2)]) == [(2, 3), (6, 6)]
    assert aborted_batches(read, []) == []


def test_aborted_records_just_acquired_are_archived_not_delivered() -> None:
    share = SharePartition("g", "t", 0, 0)
    assert share.acquire("m", batches((0, 4), (5, 9)), 100, LIMITS, 0.0) == [(0, 9, 1)]
    assert share.archive_acquired("m", 0, 4)
    assert share.start_offset == 5 and share.persisted_state()[0] == [(5, 9, AVAILABLE, 1)]
    assert not share.archive_acquired("other", 5, 9)


def test_record_limit_acquires_no_more_than_max_records_splitting_batches() -> None:
    share = SharePartition("g", "t", 0, 0)
    assert share.acquire("m", batches((0, 4), (5, 9)), 3, LIMITS, 0.0, record_limit=True) == [(0, 2, 1)]
    assert share.acquire("m", batches((0, 4), (5, 9)), 3, LIMITS, 0.0, record_limit=True) == [(3, 4, 1), (5, 5, 1)]
    share.acknowledge("m", 0, 1, [RELEASE], LIMITS)
    assert share.acquire("n", batches((0, 4), (5, 9)), 1, LIMITS, 0.0, record_limit=True) == [(0, 0, 2)]


def test_renew_locks_held_records_again_and_only_the_owner_s() -> None:
    share = SharePartition("g", "t", 0, 0)
    share.acquire("m", batches((0, 4)), 10, LIMITS, now=0.0)
    share.acknowledge("m", 0, 4, [RENEW], LIMITS, now=20.0)
    assert share.next_deadline() == 50.0 and share.start_offset == 0
    assert share.expire_locks(40.0, LIMITS) == 0
    with pytest.raises(AcknowledgeError):
        share.acknowledge("other", 0, 4, [RENEW], LIMITS, now=20.0)
    share.acknowledge("m", 0, 4, [ACCEPT], LIMITS)
    assert share.start_offset == 5
