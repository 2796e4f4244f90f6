"""One transactional id's state, and Kafka's transitions between its states, in both transaction
versions: with version 1 (EndTxn up to v4) a producer keeps its epoch across transactions; with
version 2 (KIP-890 part 2, EndTxn v5) every ended transaction bumps the epoch, so its markers fence
the old one, and the producer learns the new epoch from EndTxn's answer.

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
from typing import NoReturn

from pykafkad.coordinator.transaction.transaction_log import StoredTransaction
from wire.error_codes import ErrorCode

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
# An epoch at or above this is exhausted: the next InitProducerId rotates to a new producer id.
EXHAUSTED_EPOCH = 32766
MAX_EPOCH = 32767
# Transaction versions (the ``transaction.version`` feature): 2 bumps the epoch at each end.
TV_1 = 1
TV_2 = 2


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
    # TV2: the producer id that takes over when an exhausted epoch's transaction completes.
    next_producer_id: int = NO_PRODUCER_ID
    # The transaction version of the requests that opened the transaction (0 before TV2).
    client_transaction_version: int = 0
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
                                 self.last_update_ms, self.start_ms, previous_producer_id=self.previous_producer_id,
                                 next_producer_id=self.next_producer_id,
                                 client_transaction_version=self.client_transaction_version)

    @classmethod
    def from_stored(cls, transactional_id: str, s: StoredTransaction) -> TransactionMetadata:
        partitions = {(t, i) for t, indexes in (s.partitions or {}).items() for i in indexes}
        return cls(transactional_id, s.producer_id, s.producer_epoch, s.timeout_ms, TransactionState(s.state),
                   partitions, s.start_ms, s.last_update_ms, previous_producer_id=s.previous_producer_id,
                   next_producer_id=s.next_producer_id, client_transaction_version=s.client_transaction_version)

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

    def prepare_fence(self, now_ms: int, server_version: int) -> TransactionMetadata:
        """An open transaction whose producer is replaced or timed out: abort it at a bumped epoch,
        so the partitions refuse the old producer's writes (the markers carry the new epoch).  The
        cluster's transaction version decides, as in Kafka: with 2 the old epoch is remembered as
        the last, so the producer's own abort at it is taken as a retry of this one."""
        if self.state != TransactionState.ONGOING or self.pending is not None:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"{self.transactional_id} has no open transaction to fence")
        self.pending = TransactionState.PREPARE_EPOCH_FENCE
        if server_version >= TV_2:
            return dataclasses.replace(self, pending=TransactionState.PREPARE_ABORT,
                                       producer_epoch=min(self.producer_epoch + 1, MAX_EPOCH),
                                       last_producer_epoch=self.producer_epoch, last_update_ms=now_ms)
        epoch = self.producer_epoch if self.failed_epoch_fence else self.producer_epoch + 1
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
                               now_ms: int, client_version: int = 0) -> TransactionMetadata | None:
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
                             start_ms=start, client_transaction_version=client_version)

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
        self._refuse_end(same, commit)

    def _refuse_end(self, same: TransactionState, commit: bool) -> NoReturn:
        """An end this state cannot take: CONCURRENT_TRANSACTIONS while the same end is under way
        (the client retries), else INVALID_TXN_STATE."""
        if self.state == same:
            raise TransactionError(ErrorCode.CONCURRENT_TRANSACTIONS,
                                   f"{self.transactional_id} is completing this transaction")
        raise TransactionError(ErrorCode.INVALID_TXN_STATE,
                               f"cannot {'commit' if commit else 'abort'}: {self.transactional_id} is "
                               f"{self.state.kafka_name}")

    def prepare_end_bumping(self, producer_id: int, producer_epoch: int, commit: bool, now_ms: int,
                            new_producer_id: Callable[[], int]) -> TransactionMetadata | None:
        """EndTxn v5 (transaction version 2): PrepareCommit or PrepareAbort to write at the next
        epoch (or, for an exhausted one, with a new producer id to take over once complete); None
        for a retry of an end that completed (answered NONE with ``answer()``).  An abort with no
        transaction open only bumps the epoch, so a producer can always fence its own past."""
        self._check_not_pending()
        retry_on_bump = self.producer_epoch == producer_epoch + 1
        retry_on_overflow = (self.previous_producer_id == producer_id and producer_epoch == EXHAUSTED_EPOCH
                             and self.producer_epoch == 0)
        if producer_id != self.producer_id and not retry_on_overflow:
            raise TransactionError(ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                                   f"producer {producer_id} is not the producer {self.producer_id} of "
                                   f"{self.transactional_id}")
        current = producer_epoch == self.producer_epoch
        if self.state in (TransactionState.ONGOING, TransactionState.EMPTY):
            valid = current
        elif self.state in PREPARING:
            valid = retry_on_bump
        else:
            valid = retry_on_bump or retry_on_overflow or current
        if not valid:
            raise TransactionError(ErrorCode.PRODUCER_FENCED,
                                   f"epoch {producer_epoch} of producer {producer_id} is not the current "
                                   f"epoch {self.producer_epoch}")
        same = TransactionState.PREPARE_COMMIT if commit else TransactionState.PREPARE_ABORT
        done = TransactionState.COMPLETE_COMMIT if commit else TransactionState.COMPLETE_ABORT
        if self.state == TransactionState.ONGOING:
            return self._bumped(same, now_ms, new_producer_id)
        if self.state in PREPARING:
            self._refuse_end(same, commit)
        if not current:  # a retry: NONE if it asked for what happened
            if self.state == done:
                return None
            raise TransactionError(ErrorCode.PRODUCER_FENCED if self.state == TransactionState.EMPTY
                                   else ErrorCode.INVALID_TXN_STATE,
                                   f"{self.transactional_id} is {self.state.kafka_name}")
        if commit:
            raise TransactionError(ErrorCode.INVALID_TXN_STATE,
                                   f"cannot commit: {self.transactional_id} has no open transaction")
        return self._bumped(TransactionState.PREPARE_ABORT, now_ms, new_producer_id, start_ms=now_ms,
                            partitions=set())

    def _bumped(self, target: TransactionState, now_ms: int, new_producer_id: Callable[[], int],
                **changes: object) -> TransactionMetadata:
        if self.producer_epoch >= EXHAUSTED_EPOCH:
            # The completion moves the producer to a new id at epoch 0; the markers carry MAX_EPOCH.
            return self._transit(target, now_ms, producer_epoch=MAX_EPOCH, last_producer_epoch=self.producer_epoch,
                                 next_producer_id=new_producer_id(), client_transaction_version=TV_2, **changes)
        return self._transit(target, now_ms, producer_epoch=self.producer_epoch + 1,
                             last_producer_epoch=self.producer_epoch, client_transaction_version=TV_2, **changes)

    def answer(self) -> tuple[int, int]:
        """The producer id and epoch EndTxn v5 answers: those the producer continues with once the
        transaction completes (the new id at epoch 0 after an exhausted epoch)."""
        if self.state in PREPARING and self.next_producer_id != NO_PRODUCER_ID:
            return self.next_producer_id, 0
        return self.producer_id, self.producer_epoch

    def prepare_complete(self, now_ms: int) -> TransactionMetadata:
        """Every marker is written: CompleteCommit or CompleteAbort, with no partitions (and, after
        an exhausted epoch's TV2 end, the next producer id at epoch 0)."""
        if self.state not in PREPARING:
            raise TransactionError(ErrorCode.INVALID_TXN_STATE,
                                   f"{self.transactional_id} is {self.state.kafka_name}, not preparing")
        target = (TransactionState.COMPLETE_COMMIT if self.state == TransactionState.PREPARE_COMMIT
                  else TransactionState.COMPLETE_ABORT)
        if self.next_producer_id != NO_PRODUCER_ID:
            return self._transit(target, now_ms, partitions=set(), producer_id=self.next_producer_id,
                                 producer_epoch=0, previous_producer_id=self.producer_id,
                                 next_producer_id=NO_PRODUCER_ID, last_producer_epoch=NO_PRODUCER_EPOCH)
        return self._transit(target, now_ms, partitions=set())
