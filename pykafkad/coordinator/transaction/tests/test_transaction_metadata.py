"""Kafka's transitions of a transactional id (transaction versions 1 and 2), and the errors a
refused request gets, as Kafka's TransactionCoordinator answers them."""

from __future__ import annotations

import itertools

import pytest

from pykafkad.coordinator.transaction.transaction_log import decode_value, value
from pykafkad.coordinator.transaction.transaction_metadata import (
    EXHAUSTED_EPOCH,
    MAX_EPOCH,
    TV_1,
    TV_2,
    TransactionError,
    TransactionMetadata,
    TransactionState,
)
from wire.error_codes import ErrorCode

_ids = itertools.count(1000)


def fresh() -> TransactionMetadata:
    return TransactionMetadata("tx", next(_ids), -1, 60000)


def apply(meta: TransactionMetadata, transit: TransactionMetadata | None) -> TransactionMetadata:
    assert transit is not None
    assert meta.pending is not None
    meta.complete(transit)
    return meta


def refused(code: ErrorCode, fn, *args) -> None:  # noqa: ANN001 - any transition
    with pytest.raises(TransactionError) as e:
        fn(*args)
    assert e.value.code == code


def test_a_transaction_from_init_to_commit_and_its_retries() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    assert (m.state, m.producer_epoch) == (TransactionState.EMPTY, 0)
    apply(m, m.prepare_add_partitions(m.producer_id, 0, {("out", 0)}, 2))
    assert m.state == TransactionState.ONGOING and m.start_ms == 2
    assert m.prepare_add_partitions(m.producer_id, 0, {("out", 0)}, 3) is None, "already in the transaction"
    apply(m, m.prepare_add_partitions(m.producer_id, 0, {("out", 1)}, 4))
    assert m.partitions == {("out", 0), ("out", 1)} and m.start_ms == 2
    apply(m, m.prepare_end(m.producer_id, 0, True, 5))
    assert m.state == TransactionState.PREPARE_COMMIT
    refused(ErrorCode.CONCURRENT_TRANSACTIONS, m.prepare_end, m.producer_id, 0, True, 6)
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end, m.producer_id, 0, False, 6)
    refused(ErrorCode.CONCURRENT_TRANSACTIONS, m.prepare_init, 60000, 6, None, lambda: 0)
    apply(m, m.prepare_complete(7))
    assert m.state == TransactionState.COMPLETE_COMMIT and m.partitions == set()
    assert m.prepare_end(m.producer_id, 0, True, 8) is None, "a retried commit is answered NONE"
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end, m.producer_id, 0, False, 8)
    # The next transaction starts from CompleteCommit.
    apply(m, m.prepare_add_partitions(m.producer_id, 0, {("out", 2)}, 9))
    assert m.start_ms == 9 and m.partitions == {("out", 2)}


def test_producers_and_epochs_are_checked() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    refused(ErrorCode.INVALID_PRODUCER_ID_MAPPING, m.prepare_add_partitions, m.producer_id + 1, 0, {("t", 0)}, 2)
    apply(m, m.prepare_init(60000, 2, None, lambda: 0))
    assert m.producer_epoch == 1
    refused(ErrorCode.PRODUCER_FENCED, m.prepare_add_partitions, m.producer_id, 0, {("t", 0)}, 3)
    refused(ErrorCode.PRODUCER_FENCED, m.prepare_end, m.producer_id, 0, True, 3)
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end, m.producer_id, 1, True, 3)


def test_a_pending_write_makes_others_wait_and_a_failed_one_changes_nothing() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    transit = m.prepare_add_partitions(m.producer_id, 0, {("t", 0)}, 2)
    assert transit is not None
    refused(ErrorCode.CONCURRENT_TRANSACTIONS, m.prepare_add_partitions, m.producer_id, 0, {("t", 1)}, 2)
    m.abandon()
    assert m.state == TransactionState.EMPTY and m.partitions == set() and m.pending is None


def test_init_during_an_open_transaction_fences_it_with_a_bumped_epoch() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    apply(m, m.prepare_add_partitions(m.producer_id, 0, {("t", 0)}, 2))
    assert m.prepare_init(60000, 3, None, lambda: 0) is None, "the caller fences it"
    apply(m, m.prepare_fence(3, TV_1))
    assert (m.state, m.producer_epoch) == (TransactionState.PREPARE_ABORT, 1)
    assert m.partitions == {("t", 0)}, "the markers go where the transaction wrote"
    apply(m, m.prepare_complete(4))
    apply(m, m.prepare_init(60000, 5, None, lambda: 0))
    assert (m.state, m.producer_epoch) == (TransactionState.EMPTY, 2)


def test_kip_360_bumps_and_exhausted_epochs_rotate_the_producer_id() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    pid = m.producer_id
    apply(m, m.prepare_init(60000, 2, (pid, 0), lambda: 0))
    assert (m.producer_epoch, m.last_producer_epoch) == (1, 0)
    apply(m, m.prepare_init(60000, 3, (pid, 0), lambda: 0))
    assert m.producer_epoch == 1, "a retry of the bump it already got"
    refused(ErrorCode.PRODUCER_FENCED, m.prepare_init, 60000, 4, (pid + 7, 1), lambda: 0)
    m.producer_epoch = EXHAUSTED_EPOCH
    apply(m, m.prepare_init(60000, 5, None, lambda: 4242))
    assert (m.producer_id, m.producer_epoch, m.previous_producer_id) == (4242, 0, pid)


def test_states_round_trip_through_the_log_record() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    apply(m, m.prepare_add_partitions(m.producer_id, 0, {("a", 1), ("b", 0)}, 2))
    transit = m.prepare_end(m.producer_id, 0, False, 3)
    assert transit is not None
    back = TransactionMetadata.from_stored("tx", decode_value(value(transit.stored())))
    assert back.state == TransactionState.PREPARE_ABORT
    assert back.partitions == {("a", 1), ("b", 0)} and back.producer_id == m.producer_id
    empty = TransactionMetadata.from_stored("tx", decode_value(value(fresh().stored())))
    assert empty.state == TransactionState.EMPTY and empty.partitions == set()


def _ongoing(m: TransactionMetadata, now: int) -> None:
    apply(m, m.prepare_add_partitions(m.producer_id, m.producer_epoch, {("t", 0)}, now, TV_2))


def test_tv2_every_end_bumps_the_epoch_and_retries_are_told_the_new_one() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    _ongoing(m, 2)
    assert m.client_transaction_version == TV_2
    apply(m, m.prepare_end_bumping(m.producer_id, 0, True, 3, lambda: 0))
    assert (m.state, m.producer_epoch, m.last_producer_epoch) == (TransactionState.PREPARE_COMMIT, 1, 0)
    assert m.answer() == (m.producer_id, 1), "the epoch to go on with, before the markers"
    refused(ErrorCode.CONCURRENT_TRANSACTIONS, m.prepare_end_bumping, m.producer_id, 0, True, 4, lambda: 0)
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end_bumping, m.producer_id, 0, False, 4, lambda: 0)
    apply(m, m.prepare_complete(5))
    assert m.prepare_end_bumping(m.producer_id, 0, True, 6, lambda: 0) is None, "a retried commit"
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end_bumping, m.producer_id, 0, False, 6, lambda: 0)
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end_bumping, m.producer_id, 1, True, 6, lambda: 0)
    refused(ErrorCode.PRODUCER_FENCED, m.prepare_end_bumping, m.producer_id, 5, True, 6, lambda: 0)
    refused(ErrorCode.INVALID_PRODUCER_ID_MAPPING, m.prepare_end_bumping, m.producer_id + 1, 1, True, 6,
            lambda: 0)
    # An abort with nothing open only bumps the epoch (no partitions, so no markers).
    apply(m, m.prepare_end_bumping(m.producer_id, 1, False, 7, lambda: 0))
    assert (m.state, m.producer_epoch, m.partitions) == (TransactionState.PREPARE_ABORT, 2, set())
    apply(m, m.prepare_complete(8))
    assert m.prepare_end_bumping(m.producer_id, 1, False, 9, lambda: 0) is None, "a retried abort"


def test_tv2_an_exhausted_epoch_moves_to_a_new_producer_id_when_complete() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    old = m.producer_id
    m.producer_epoch = EXHAUSTED_EPOCH
    _ongoing(m, 2)
    apply(m, m.prepare_end_bumping(old, EXHAUSTED_EPOCH, True, 3, lambda: 777))
    assert m.producer_epoch == MAX_EPOCH, "the markers fence every epoch of the old id"
    assert m.answer() == (777, 0)
    apply(m, m.prepare_complete(4))
    assert (m.producer_id, m.producer_epoch, m.previous_producer_id) == (777, 0, old)
    assert m.prepare_end_bumping(old, EXHAUSTED_EPOCH, True, 5, lambda: 0) is None, "a retry from the old id"
    back = TransactionMetadata.from_stored("tx", decode_value(value(m.stored())))
    assert (back.producer_id, back.previous_producer_id) == (777, old)


def test_tv2_fence_remembers_the_fenced_epoch_so_its_abort_is_a_retry() -> None:
    m = fresh()
    apply(m, m.prepare_init(60000, 1, None, lambda: 0))
    _ongoing(m, 2)
    apply(m, m.prepare_fence(3, TV_2))
    assert (m.state, m.producer_epoch, m.last_producer_epoch) == (TransactionState.PREPARE_ABORT, 1, 0)
    apply(m, m.prepare_complete(4))
    assert m.prepare_end_bumping(m.producer_id, 0, False, 5, lambda: 0) is None
    assert m.answer() == (m.producer_id, 1)
    refused(ErrorCode.INVALID_TXN_STATE, m.prepare_end_bumping, m.producer_id, 0, True, 5, lambda: 0)
