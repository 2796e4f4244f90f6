"""A share-partition on its partition's leader (KIP-932): which records of one partition one share
group has in flight, in which state, delivered how often, and locked by whom until when.

The in-flight records are kept as runs of consecutive offsets that share a state, a delivery count,
an owner and a lock deadline (Kafka's in-flight batches): a log batch acquired whole is one run, and
a run splits only where an acknowledgement, a release or an expiry covers part of it.  Adjacent runs
that come to agree merge again, so the memory held follows the number of distinct ranges, never the
number of records.

Offsets: the share-partition start offset (SPSO) is the first offset not yet acknowledged or
archived; every offset below it is done.  The runs cover ``[start_offset, end_offset)`` with no
gap; the records from ``end_offset`` on have never been acquired.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from pykafkad.replica.watchers import Watchers
from wire.error_codes import ErrorCode

# Record states, by the ids Kafka persists them with (server.share.fetch.RecordState).
AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVING, ARCHIVED = 0, 1, 2, 3, 4
TERMINAL = (ACKNOWLEDGED, ARCHIVED)

# Why a record goes to the group's dead-letter topic (the __dlq.errors.message header; Kafka's words
# for the delivery limit).
DELIVERY_COUNT_EXCEEDED = "Offset delivery count exceeded the threshold."
REJECTED = "Record rejected by the share consumer."

# Acknowledge types (ShareFetch / ShareAcknowledge AcknowledgementBatch.AcknowledgeTypes); RENEW
# (v2, KIP-1222) only in a request that says IsRenewAck.
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
MAX_ACKNOWLEDGE_TYPE = REJECT

NO_OWNER = ""

# A record batch's header: base offset (int64), batch length (int32), then at byte 23 the last
# offset delta (int32).  Only headers are read; records are never decoded here.
_BASE_AND_LENGTH = struct.Struct(">qi")
_LAST_OFFSET_DELTA = struct.Struct(">i")
_BATCH_OVERHEAD = 12  # base offset and length, not counted in the length
# Further in the header: the attributes (int16) at byte 21 and the producer id (int64) at byte 43.
_ATTRIBUTES = struct.Struct(">h")
_PRODUCER_ID = struct.Struct(">q")
_HEADER_BYTES = 61
_TRANSACTIONAL, _CONTROL = 0x10, 0x20


def _whole_batches(records: bytes | memoryview) -> Iterator[tuple[int, int, int, int]]:
    """(start byte, first offset, last offset, end byte) of each whole record batch in a log read; a
    partial batch at the end of a read is not delivered."""
    pos, end = 0, len(records)
    while pos + 27 <= end:
        base, length = _BASE_AND_LENGTH.unpack_from(records, pos)
        stop = pos + _BATCH_OVERHEAD + length
        if stop > end:
            break
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(records, pos + 23)
        yield pos, base, base + delta, stop
        pos = stop


def batch_extents(records: bytes | memoryview) -> list[tuple[int, int, int]]:
    """(first offset, last offset, end byte) of each whole record batch in a log read."""
    return [(first, last, stop) for _, first, last, stop in _whole_batches(records)]


def aborted_batches(records: bytes | memoryview, aborted: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first offset, last offset) of the batches in a log read that belong to aborted transactions,
    given those that began in the read as (producer id, first offset): what a read_committed share
    group never delivers (Kafka's SharePartition.fetchAbortedTransactionRecordBatches).  A producer's
    aborted transaction is open from its first offset to the producer's next control batch (its
    abort marker: a transaction listed as aborted cannot end with a commit)."""
    pending = sorted(aborted, key=lambda a: a[1])
    open_aborted: set[int] = set()
    found: list[tuple[int, int]] = []
    for start, first, last, stop in _whole_batches(records):
        if stop - start < _HEADER_BYTES:
            continue  # not a v2 batch: no producer id
        (attributes,) = _ATTRIBUTES.unpack_from(records, start + 21)
        (producer_id,) = _PRODUCER_ID.unpack_from(records, start + 43)
        if producer_id < 0:
            continue
        while pending and pending[0][1] <= last:
            open_aborted.add(pending.pop(0)[0])
        if attributes & _CONTROL:
            open_aborted.discard(producer_id)
        elif attributes & _TRANSACTIONAL and producer_id in open_aborted:
            found.append((first, last))
    return found


class AcknowledgeError(Exception):
    """An acknowledgement this share-partition refuses, with Kafka's code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)
class Run:
    """Consecutive offsets in one state."""

    first: int
    last: int
    state: int
    delivery_count: int
    owner: str = NO_OWNER
    # trio.current_time() at which an ACQUIRED run's acquisition lock expires.
    deadline: float = 0.0
    # An ARCHIVING run's reason, for its dead letters.
    reason: str = ""

    def same_as(self, other: Run) -> bool:
        return (self.state == other.state and self.delivery_count == other.delivery_count
                and self.owner == other.owner and self.deadline == other.deadline and self.reason == other.reason)


@dataclass(frozen=True)
class SharePartitionLimits:
    """The group's settings a share-partition works under (group configs over broker defaults)."""

    delivery_count_limit: int
    max_record_locks: int
    lock_duration_ms: int
    # Whether records archived for their delivery count or a REJECT go to a dead-letter topic first
    # (ARCHIVING until they are written there).
    dead_letters: bool = False
    # share.isolation.level=read_committed: reads stop at the last stable offset and aborted
    # transactions' records are archived when read.
    read_committed: bool = False


class SharePartition:
    """One share group's view of one partition, on that partition's leader."""

    def __init__(self, group: str, topic: str, index: int, start_offset: int, leader_epoch: int = 0,
                 state_epoch: int = 0) -> None:
        self.group, self.topic, self.index = group, topic, index
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.runs: list[Run] = []
        # Woken when records become available again (release, expiry) or the start offset moves.
        self.watchers = Watchers()
        # The epochs its state is written with (the partition's leader epoch when it was loaded).
        self.leader_epoch, self.state_epoch = leader_epoch, state_epoch
        # Counts the changes to persisted state; ``persisted`` is the count last written.
        self.changes = 0
        self.persisted = 0

    @classmethod
    def restored(cls, group: str, topic: str, index: int, start_offset: int,
                 batches: list[tuple[int, int, int, int]], leader_epoch: int, state_epoch: int) -> SharePartition:
        """A share-partition as its persisted state left it: ``batches`` as (first, last, state,
        delivery count); records being dead-lettered still are (their reason is not persisted).
        Offsets past the start that no batch names were never delivered for sure, so they are
        available again, delivery count 0, as Kafka's leader treats such gaps."""
        share = cls(group, topic, index, start_offset, leader_epoch, state_epoch)
        for first, last, state, count in sorted(batches):
            if last < share.end_offset:
                continue
            first = max(first, share.end_offset)
            if first > share.end_offset:
                share.runs.append(Run(share.end_offset, first - 1, AVAILABLE, 0))
            reason = DELIVERY_COUNT_EXCEEDED if state == ARCHIVING else ""
            share.runs.append(Run(first, last, state if state in (*TERMINAL, ARCHIVING) else AVAILABLE, count,
                                  reason=reason))
            share.end_offset = last + 1
        share._advance()
        share.persisted = share.changes
        return share

    def persisted_state(self) -> tuple[list[tuple[int, int, int, int]], int]:
        """What is written: the in-flight runs as (first, last, state, delivery count), an acquired one
        as available (a new leader delivers it again), and how many records past the start are done."""
        batches = [(r.first, r.last, AVAILABLE if r.state == ACQUIRED else r.state, r.delivery_count)
                   for r in self.runs]
        done = sum(r.last - r.first + 1 for r in self.runs if r.state in TERMINAL)
        return batches, done

    # -- reading the state ---------------------------------------------------------------------

    def in_flight(self) -> int:
        return self.end_offset - self.start_offset

    def first_available(self) -> int | None:
        for run in self.runs:
            if run.state == AVAILABLE:
                return run.first
        return None

    def can_acquire(self, limits: SharePartitionLimits) -> bool:
        return self.first_available() is not None or self.in_flight() < limits.max_record_locks

    def next_fetch_offset(self) -> int:
        """Where the next log read starts: the first record made available again, else the first
        never acquired."""
        first = self.first_available()
        return self.end_offset if first is None else first

    def has_locks(self) -> bool:
        return any(run.state == ACQUIRED for run in self.runs)

    def next_deadline(self) -> float | None:
        deadlines = [run.deadline for run in self.runs if run.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    # -- acquiring ---------------------------------------------------------------------------------

    def acquire(self, owner: str, batches: list[tuple[int, int, int]], max_records: int, limits: SharePartitionLimits,
                now: float, held_back: tuple[tuple[int, int], ...] = (),
                record_limit: bool = False) -> list[tuple[int, int, int]]:
        """Acquire for ``owner`` what the log read (whole batches, ``batches``) covers and nobody holds,
        up to ``max_records`` (a batch is taken whole, so a fetch may pass it, as Kafka's
        batch_optimized mode does; ``record_limit``: never past it, KIP-1206's mode); the acquired
        ranges as (first, last, delivery count).

        ``held_back``: ranges released by the acknowledgements of the fetch asking, left for a later
        fetch (on Kafka they are still being written when the fetch acquires)."""
        deadline = now + limits.lock_duration_ms / 1000
        acquired: list[tuple[int, int, int]] = []
        taken = 0
        if not batches:
            return acquired
        read_first, read_last = batches[0][0], batches[-1][1]
        # Records released or expired earlier, within what the read covers.
        for run in list(self.runs):
            if taken >= max_records:
                break
            if run.state != AVAILABLE or run.last < read_first or run.first > read_last:
                continue
            for first, last in without((max(run.first, read_first), min(run.last, read_last)), held_back):
                if record_limit:
                    if taken >= max_records:
                        break
                    last = min(last, first + max_records - taken - 1)
                for piece in self._cover(first, last):
                    piece.state, piece.owner, piece.deadline = ACQUIRED, owner, deadline
                    piece.delivery_count += 1
                    acquired.append((piece.first, piece.last, piece.delivery_count))
                    taken += piece.last - piece.first + 1
        # Then records never acquired, whole batches from the end of the in-flight ones, with what
        # the fetch may still take (as Kafka's acquire goes on past its cached batches).
        for first, last, _ in batches:
            if taken >= max_records or self.in_flight() >= limits.max_record_locks:
                break
            if last < self.end_offset:
                continue
            # A batch that starts below the end offset was partly acquired before (the start
            # offset was set inside it): only its rest is new.
            first = max(first, self.end_offset)
            batch_last = last
            if record_limit:
                last = min(last, first + max_records - taken - 1)
            self.runs.append(Run(self.end_offset, last, ACQUIRED, 1, owner, deadline))
            # Offsets missing between the end and the batch (compacted away) are acquired with it.
            acquired.append((self.end_offset, last, 1))
            taken += last - first + 1
            self.end_offset = last + 1
            if last < batch_last:
                # record_limit took part of the batch: the rest is in flight, never delivered (as
                # Kafka caches the whole batch), for the next fetch.
                self.runs.append(Run(last + 1, batch_last, AVAILABLE, 0))
                self.end_offset = batch_last + 1
        self._merge()
        # (Kafka's record_limit mode names each batch's share apart; batch_optimized merges them.)
        return acquired if record_limit else merged_ranges(acquired)

    def archive_acquired(self, owner: str, first: int, last: int) -> bool:
        """The records of ``[first, last]`` that ``owner`` just acquired are archived instead of
        delivered (those of an aborted transaction, for a read_committed group); whether any were."""
        archived = False
        for piece in self._cover(max(first, self.start_offset), min(last, self.end_offset - 1)):
            if piece.state == ACQUIRED and piece.owner == owner:
                piece.state, piece.owner, piece.deadline = ARCHIVED, NO_OWNER, 0.0
                archived = True
        if archived:
            self._advance()
        else:
            self._merge()
        return archived

    # -- acknowledging, releasing, expiring -----------------------------------------------------

    def acknowledge(self, owner: str, first: int, last: int, types: list[int], limits: SharePartitionLimits,
                    now: float = 0.0) -> None:
        """One acknowledgement batch of ``owner``'s: one type for the whole range, or one per offset
        (RENEW: still acquired, locked anew from ``now``).  Raises AcknowledgeError with Kafka's code
        and message, changing nothing."""
        if last < self.start_offset:
            return  # already done: Kafka counts it as acknowledged
        if first >= self.end_offset or last >= self.end_offset:
            raise AcknowledgeError(ErrorCode.INVALID_REQUEST,
                                   "Batch record not found. The first/last offset in request is past acquired "
                                   "records.")
        first = max(first, self.start_offset)
        for run in self.runs:
            if run.last < first or run.first > last:
                continue
            if run.state != ACQUIRED:
                raise AcknowledgeError(ErrorCode.INVALID_RECORD_STATE,
                                       "The batch cannot be acknowledged. The batch is not in the acquired state.")
            if run.owner != owner:
                raise AcknowledgeError(ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of batch record")
        if len(types) == 1:
            self._settle(first, last, types[0], limits, now)
        else:
            base = last - len(types) + 1
            for offset in range(first, last + 1):
                self._settle(offset, offset, types[offset - base], limits, now)
        self._advance()

    def release_owner(self, owner: str, limits: SharePartitionLimits) -> int:
        """Every record ``owner`` holds made available again (archived at the delivery limit): its
        session closed or its connection dropped.  How many were released."""
        released = 0
        for run in self.runs:
            if run.state == ACQUIRED and run.owner == owner:
                released += run.last - run.first + 1
                _make_available(run, limits)
        if released:
            self._advance()
        return released

    def expire_locks(self, now: float, limits: SharePartitionLimits) -> int:
        """Records whose acquisition lock ran out made available again (archived at the delivery limit)."""
        expired = 0
        for run in self.runs:
            if run.state == ACQUIRED and run.deadline <= now:
                expired += run.last - run.first + 1
                _make_available(run, limits)
        if expired:
            self._advance()
        return expired

    def move_start(self, log_start_offset: int) -> None:
        """The log's start moved past records (retention, DeleteRecords): they are archived."""
        if log_start_offset <= self.start_offset:
            return
        self.runs = [r for r in self.runs if r.last >= log_start_offset]
        if self.runs and self.runs[0].first < log_start_offset:
            self.runs[0].first = log_start_offset
        self.start_offset = log_start_offset
        self.end_offset = max(self.end_offset, log_start_offset)
        self._advance()

    # -- dead letters ------------------------------------------------------------------------------

    def dead_letters(self) -> list[tuple[int, int, int, str]]:
        """The records waiting to be written to the dead-letter topic: (first, last, delivery count,
        reason) per run."""
        return [(r.first, r.last, r.delivery_count, r.reason) for r in self.runs if r.state == ARCHIVING]

    def dead_lettered(self, first: int, last: int) -> None:
        """Those records are in the dead-letter topic: archived."""
        for run in self._cover(first, last):
            if run.state == ARCHIVING:
                run.state, run.reason = ARCHIVED, ""
        self._advance()

    # -- the runs -------------------------------------------------------------------------------

    def _settle(self, first: int, last: int, ack_type: int, limits: SharePartitionLimits, now: float) -> None:
        for piece in self._cover(first, last):
            if ack_type == RENEW:
                piece.deadline = now + limits.lock_duration_ms / 1000
                continue
            if ack_type == RELEASE:
                _make_available(piece, limits)
                continue
            piece.owner, piece.deadline = NO_OWNER, 0.0
            if ack_type == ACCEPT:
                piece.state = ACKNOWLEDGED
            elif ack_type == REJECT and limits.dead_letters:
                piece.state, piece.reason = ARCHIVING, REJECTED
            else:
                piece.state = ARCHIVED  # GAP, and REJECT with no dead-letter topic

    def _cover(self, first: int, last: int) -> list[Run]:
        """The runs exactly covering ``[first, last]`` (all in flight), split at its two ends."""
        self._split_at(first)
        self._split_at(last + 1)
        return [run for run in self.runs if first <= run.first and run.last <= last]

    def _split_at(self, offset: int) -> None:
        """Make ``offset`` the first of a run, if a run holds it."""
        for i, run in enumerate(self.runs):
            if run.first < offset <= run.last:
                self.runs.insert(i + 1, Run(offset, run.last, run.state, run.delivery_count, run.owner, run.deadline,
                                            run.reason))
                run.last = offset - 1
                return

    def _advance(self) -> None:
        """Move the start offset past the done records at the front, and forget them."""
        self.changes += 1
        done = 0
        for run in self.runs:
            if run.state not in TERMINAL:
                break
            done += 1
        if done:
            self.start_offset = self.runs[done - 1].last + 1
            del self.runs[:done]
        if not self.runs:
            self.start_offset = max(self.start_offset, self.end_offset)
        self._merge()
        self.watchers.wake_all()

    def _merge(self) -> None:
        merged: list[Run] = []
        for run in self.runs:
            if merged and merged[-1].same_as(run) and merged[-1].last + 1 == run.first:
                merged[-1].last = run.last
            else:
                merged.append(run)
        self.runs = merged


def _make_available(run: Run, limits: SharePartitionLimits) -> None:
    # A record delivered as often as the limit allows is archived instead (Kafka's
    # InFlightState.tryUpdateState), by way of the dead-letter topic when the group has one.
    run.owner, run.deadline = NO_OWNER, 0.0
    if run.delivery_count < limits.delivery_count_limit:
        run.state = AVAILABLE
    elif limits.dead_letters:
        run.state, run.reason = ARCHIVING, DELIVERY_COUNT_EXCEEDED
    else:
        run.state = ARCHIVED


def without(span: tuple[int, int], holes: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """``span`` less every range of ``holes``, as the ranges left."""
    pieces = [span]
    for hole_first, hole_last in holes:
        left = []
        for first, last in pieces:
            if hole_last < first or hole_first > last:
                left.append((first, last))
                continue
            if first < hole_first:
                left.append((first, hole_first - 1))
            if last > hole_last:
                left.append((hole_last + 1, last))
        pieces = left
    return pieces


def merged_ranges(ranges: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Adjacent acquired ranges with the same delivery count as one (Kafka's accumulateAcquiredRecords)."""
    out: list[tuple[int, int, int]] = []
    for first, last, count in sorted(ranges):
        if out and out[-1][1] + 1 == first and out[-1][2] == count:
            out[-1] = (out[-1][0], last, count)
        else:
            out.append((first, last, count))
    return out
