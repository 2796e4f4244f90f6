"""One transactional id's state, and Kafka's transitions between its states (transaction version 1).

Every change is made in two steps, as Kafka's TransactionMetadata does: a ``prepare_*`` call checks
the request against the current state and returns the state to write (a ``TransactionMetadata``
copy) with the target set as ``pending``; the coordinator writes it to ``__transaction_state`` and,
once the write is replicated, ``complete`` makes it current.  While a change is pending, requests
are answered CONCURRENT_TRANSACTIONS.  A refused request raises ``TransactionError`` with Kafka's
error code.  Nothing here does I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from pykafkad.coordinator.transaction.transaction_log import StoredTransaction
from wire.error_codes import ErrorCode

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
# An epoch at or above this is exhausted: the next InitProducerId rotates to a new producer id.
EXHAUSTED_EPOCH = 32766


class TransactionState(IntEnum):
    """The states and their ids in TransactionLogValue (PrepareEpochFence and Dead are never written)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions and ListTransactions show."""
        return _NAMES[self]


_NAMES = {
    TransactionState.EMPTY: "Empty", TransactionState.ONGOING: "Ongoing",
    TransactionState.PREPARE_COMMIT: "PrepareCommit", TransactionState.PREPARE_ABORT: "PrepareAbort",
    TransactionState.COMPLETE_COMMIT: "CompleteCommit", TransactionState.COMPLETE_ABORT: "CompleteAbort",
    TransactionState.DEAD: "Dead", TransactionState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
COMPLETE = (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)
PREPARING = (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)


class TransactionError(Exception):
    """A request the state refuses, with the error code Kafka answers."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class TransactionMetadata:
    """A transactional id's state; ``pending`` is the state a write under way will make current."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState = TransactionState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    previous_producer_id: int = NO_PRODUCER_ID
    pending: TransactionState | None = None
    # Set when an epoch fence's write failed: the next fence does not bump the epoch again.
    failed_epoch_fence: bool = False

    # -- the log record ------------------------------------------------------------------------

    def stored(self) -> StoredTransaction:
        """This state as a TransactionLogValue (the target state of a transit)."""
        state = self.pending if self.pending is not None else self.state
        partitions: dict[str, list[int]] | None = None
        if state != TransactionState.EMPTY:
            partitions = {}
            for topic, index in sorted(self.partitions):
                partitions.setdefault(topic, []).append(index)
        return StoredTransaction(self.producer_id, self.producer_epoch, self.timeout_ms, int(state), partitions,
                                 self.last_update_ms, self.start_ms, previous_producer_id=self.previous_producer_id)

    @classmethod
    def from_stored(cls, transactional_id: str, s: StoredTransaction) -> TransactionMetadata:
        partitions = {(t, i) for t, indexes in (s.partitions or {}).items() for i in indexes}
        return cls(transactional_id, s.producer_id, s.producer_epoch, s.timeout_ms, TransactionState(s.state),
                   partitions, s.start_ms, s.last_update_ms, previous_producer_id=s.previous_producer_id)

    # -- transitions -----------------------------------------------------------------------------

    def _transit(self, target: TransactionState, now_ms: int, **changes: object) -> TransactionMetadata:
        self.pending = target
        return dataclasses.replace(self, pending=target, last_update_ms=now_ms, **changes)

    def complete(self, transit: TransactionMetadata) -> None:
        """The write of ``transit`` is replicated: it becomes the current state."""
        target = transit.pending
        assert target is not None
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(transit, f.name))
        self.state = target
        self.pending = None
        self.failed_epoch_fence = False

    def abandon(self) -> None:
        """The write of the pending transit failed: nothing changes."""
        if self.pending == TransactionState.PREPARE_EPOCH_FENCE:
            self.failed_epoch_fence = True
        self.pending = None

    def _check_not_pending(self) -> None:
        if self.pending is not None:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"transactional id {self.transactional_id} is changing state to "
                                   f"{self.pending.kafka_name}")

    def prepare_init(self, timeout_ms: int, now_ms: int, expected: tuple[int, int] | None,
                     new_producer_id: Callable[[], int]) -> TransactionMetadata | None:
        """InitProducerId.  Returns the Empty state to write with the new epoch (or new producer id);
        None when a transaction is open: the caller fences it (``prepare_fence``) and answers
        CONCURRENT_TRANSACTIONS, and the producer retries once it is aborted."""
        self._check_not_pending()
        if expected is not None and not (
                self.producer_epoch == NO_PRODUCER_EPOCH or expected[0] == self.producer_id
                or (expected[0] == self.previous_producer_id and expected[1] >= EXHAUSTED_EPOCH)):
            raise TransactionError(ErrorCode.PRODUCER_FENCED,
                                   f"producer {expected[0]} epoch {expected[1]} is not the current producer "
                                   f"{self.producer_id} of {self.transactional_id}")
        if self.state in PREPARING:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"{self.transactional_id} is completing its last transaction")
        if self.state == TransactionState.ONGOING:
            return None
        reset = {"partitions": set(), "start_ms": -1, "timeout_ms": timeout_ms}
        if self.producer_epoch >= EXHAUSTED_EPOCH and (expected is None or expected[1] == self.producer_epoch):
            return self._transit(TransactionState.EMPTY, now_ms, producer_id=new_producer_id(), producer_epoch=0,
                                 previous_producer_id=self.producer_id,
                                 last_producer_epoch=self.producer_epoch if expected else NO_PRODUCER_EPOCH,
                                 **reset)
        if expected is None:
            epoch, last = self.producer_epoch + 1, NO_PRODUCER_EPOCH
        elif expected[1] == self.producer_epoch or self.producer_epoch == NO_PRODUCER_EPOCH:
            epoch, last = self.producer_epoch + 1, self.producer_epoch
        elif expected[1] == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch  # a retry of a bump that succeeded
        else:
            raise TransactionError(ErrorCode.PRODUCER_FENCED,
                                   f"epoch {expected[1]} of producer {expected[0]} is neither the current "
                                   f"{self.producer_epoch} nor the last {self.last_producer_epoch}")
        return self._transit(TransactionState.EMPTY, now_ms, producer_epoch=epoch, last_producer_epoch=last,
                             **reset)

    def prepare_fence(self, now_ms: int) -> TransactionMetadata:
        """An open transaction whose producer is replaced or timed out: abort it at a bumped epoch,
        so the partitions refuse the old producer's writes (the markers carry the new epoch)."""
        if self.state != TransactionState.ONGOING or self.pending is not None:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"{self.transactional_id} has no open transaction to fence")
        epoch = self.producer_epoch if self.failed_epoch_fence else self.producer_epoch + 1
        self.pending = TransactionState.PREPARE_EPOCH_FENCE
        return dataclasses.replace(self, pending=TransactionState.PREPARE_ABORT, producer_epoch=epoch,
                                   last_producer_epoch=NO_PRODUCER_EPOCH, last_update_ms=now_ms)

    def check_producer(self, producer_id: int, producer_epoch: int) -> None:
        """INVALID_PRODUCER_ID_MAPPING or PRODUCER_FENCED unless this is the id's current producer."""
        if producer_id != self.producer_id:
            raise TransactionError(ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                                   f"producer {producer_id} is not the producer {self.producer_id} of "
                                   f"{self.transactional_id}")
        if producer_epoch != self.producer_epoch:
            raise TransactionError(ErrorCode.PRODUCER_FENCED,
                                   f"epoch {producer_epoch} of producer {producer_id} is not the current "
                                   f"epoch {self.producer_epoch}")

    def prepare_add_partitions(self, producer_id: int, producer_epoch: int, partitions: set[tuple[str, int]],
                               now_ms: int) -> TransactionMetadata | None:
        """AddPartitionsToTxn / AddOffsetsToTxn: the Ongoing state with ``partitions`` added; None when
        they are all in the open transaction already (nothing to write)."""
        self._check_not_pending()
        self.check_producer(producer_id, producer_epoch)
        if self.state in PREPARING:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"{self.transactional_id} is completing its last transaction")
        if self.state == TransactionState.ONGOING and partitions <= self.partitions:
            return None
        if self.state not in (TransactionState.ONGOING, *COMPLETE):
            raise TransactionError(ErrorCode.INVALID_TXN_STATE,
                                   f"{self.transactional_id} is {self.state.kafka_name}")
        start = now_ms if self.state != TransactionState.ONGOING else self.start_ms
        return self._transit(TransactionState.ONGOING, now_ms, partitions=self.partitions | partitions,
                             start_ms=start)

    def prepare_end(self, producer_id: int, producer_epoch: int, commit: bool,
                    now_ms: int) -> TransactionMetadata | None:
        """EndTxn: PrepareCommit or PrepareAbort to write; None for a retry of an end that already
        completed (answered NONE, nothing written)."""
        self.check_producer(producer_id, producer_epoch)  # before the pending check, as Kafka's TV1
        self._check_not_pending()
        same = TransactionState.PREPARE_COMMIT if commit else TransactionState.PREPARE_ABORT
        done = TransactionState.COMPLETE_COMMIT if commit else TransactionState.COMPLETE_ABORT
        if self.state == TransactionState.ONGOING:
            return self._transit(same, now_ms)
        if self.state == done:
            return None
        if self.state == same:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"{self.transactional_id} is completing this transaction")
        raise TransactionError(ErrorCode.INVALID_TXN_STATE,
                               f"cannot {'commit' if commit else 'abort'}: {self.transactional_id} is "
                               f"{self.state.kafka_name}")

    def prepare_complete(self, now_ms: int) -> TransactionMetadata:
        """Every marker is written: CompleteCommit or CompleteAbort, with no partitions."""
        if self.state not in PREPARING:
            raise TransactionError(ErrorCode.INVALID_TXN_STATE,
                                   f"{self.transactional_id} is {self.state.kafka_name}, not preparing")
        target = (TransactionState.COMPLETE_COMMIT if self.state == TransactionState.PREPARE_COMMIT
                  else TransactionState.COMPLETE_ABORT)
        return self._transit(target, now_ms, partitions=set())
