"""One partition replica on this broker: its log, its role (leader or follower) and leader epoch, its
replica set and ISR, its high watermark, and the operations waiting on it.

A Partition is the only door into its log for records: the leader's appends (produce and the
coordinators alike), the follower's appends and truncations, and every fetch read go through it, as
through Kafka's ``Partition.appendRecordsToLeader`` and ``fetchRecords``.  The replica manager
batches across partitions and decides which work leaves the event loop; it asks partitions.

The leader's high watermark is the smallest log end offset among the in-sync replicas: what every
one of them has, so what survives the loss of any.  Consumers read only below it, and an
``acks=all`` produce is answered once it has passed the produced records.  It never moves back
while this replica leads.  With an ISR of this broker alone, it follows each append.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

import trio

from pykafkad._rust_log import DelayedFetch, LogError, LogSlice, PartitionLog
from pykafkad.errors import KafkaError
from pykafkad.metadata.model import NO_LEADER
from pykafkad.replica.watchers import Watchers, parked_on
from wire.error_codes import ErrorCode
from wire.primitives import DEFER_RECORDS_MIN

log = logging.getLogger(__name__)

NO_EPOCH = -1
# Appends of more than this many bytes run on a worker thread (leader and follower alike).
INLINE_APPEND_BYTES = 1 << 20
# Record sets at least this large are sent from the segment file (sendfile) on a connection that can:
# below it, one copy costs less than the extra system call.  Equal to the size from which the wire
# codec leaves a record set out of the encoded response (DEFER_RECORDS_MIN), as a slice must be.
ZERO_COPY_MIN_BYTES = DEFER_RECORDS_MIN
# ListOffsets' special timestamps.
LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3  # KIP-734
EARLIEST_LOCAL = -4  # KIP-405; with no tiered storage, the log start
LATEST_TIERED = -5  # KIP-1005; with no tiered storage, none (-1)
EARLIEST_PENDING_UPLOAD = -6  # KIP-1023; with no tiered storage, none (-1)


@dataclass(frozen=True)
class FetchedData:
    """One partition's answer to a fetch: an error, or its watermarks and record bytes."""

    error: ErrorCode | int
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    # A LogSlice (a range of a segment file, sent with sendfile) when the read was zero-copy.
    records: bytes | LogSlice = b""
    # To a follower whose log diverges from the leader's: (epoch, end offset) to truncate to.
    diverging_epoch: tuple[int, int] | None = None
    # read_committed: the aborted transactions in the range read, as (producer id, first offset).
    aborted_transactions: list[tuple[int, int]] | None = None


# The answer for a session partition with nothing new for its fetcher: left out of the response.
QUIET = FetchedData(ErrorCode.NONE)


@dataclass(frozen=True)
class AppendInfo:
    """Where the log put an appended batch."""

    base_offset: int
    last_offset: int
    log_append_time_ms: int
    log_start_offset: int


def _now_ms() -> int:
    return int(time.time() * 1000)


def check_leader_epoch(requested: int, current: int) -> ErrorCode | None:
    """KIP-320: a client that knows a newer epoch than ours is ahead of us; an older one has been fenced."""
    if requested == NO_EPOCH or requested == current:
        return None
    return ErrorCode.UNKNOWN_LEADER_EPOCH if requested > current else ErrorCode.FENCED_LEADER_EPOCH


class Partition:
    """A replica of ``topic``-``index`` held by broker ``local_id``."""

    def __init__(self, topic: str, index: int, log: PartitionLog, local_id: int) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.local_id = local_id
        self.leader_id = NO_LEADER
        self.leader_epoch = NO_EPOCH
        self.replicas: list[int] = []
        self.isr: list[int] = []
        self.high_watermark = 0
        # The log end offset when this replica last became leader (Kafka's leaderEpochStartOffset):
        # until the high watermark reaches it, offsets lookups answer OFFSET_NOT_AVAILABLE (KIP-207).
        self.leader_epoch_start_offset: int | None = None
        # Log end offsets the followers last fetched from (leader only).
        self._follower_end_offsets: dict[int, int] = {}
        # The log start offsets the followers last reported (-1 until they do), for DeleteRecords'
        # low watermark (leader only).
        self._follower_log_starts: dict[int, int] = {}
        # When each follower last fetched from at least the leader's log end offset as it was at its
        # previous fetch (Kafka's lastCaughtUpTimeMs), for the ISR shrink (leader only).
        self._follower_caught_up_ms: dict[int, int] = {}
        self._follower_previous_fetch_leo: dict[int, int] = {}
        # An ISR change written to the metadata store and not yet read back (leader only).
        self.pending_isr: list[int] | None = None
        self.watchers = Watchers()

    def __repr__(self) -> str:
        return (f"Partition({self.topic}-{self.index}, leader={self.leader_id}, epoch={self.leader_epoch}, "
                f"isr={self.isr}, hw={self.high_watermark})")

    # -- role ----------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.local_id

    def make_leader(self, leader_epoch: int, replicas: list[int], isr: list[int]) -> None:
        """Lead from ``leader_epoch`` on.  Followers' positions are unknown until they fetch, so the high
        watermark stays where it is unless the ISR is this replica alone."""
        new_term = leader_epoch != self.leader_epoch or not self.is_leader
        self.leader_id = self.local_id
        self.leader_epoch = leader_epoch
        self.replicas = list(replicas)
        self.isr = list(isr)
        if new_term:
            self.leader_epoch_start_offset = self.log.log_end_offset
            # The epoch starts here even before anything of it is written, as Kafka's leader records
            # it: asked where an older epoch ends, even one this replica never saw (a follower's last
            # batch came from the previous leader alone), the answer is "where mine starts".  Without
            # it the answer was none, the follower kept its extra batch and fetched past this log's
            # end for good (found by the fault injector).
            try:
                self.log.assign_leader_epoch(leader_epoch)
            except LogError as e:
                log.warning("%s-%d: recording leader epoch %d: %s", self.topic, self.index, leader_epoch, e)
            self._follower_end_offsets = {r: -1 for r in replicas if r != self.local_id}
            self._follower_log_starts = {r: -1 for r in replicas if r != self.local_id}
            # Followers in the ISR start caught up: the lag clock runs from the new term.
            now = _now_ms()
            self._follower_caught_up_ms = {r: now for r in replicas if r != self.local_id}
            self._follower_previous_fetch_leo = {}
        else:
            self._track(replicas)
        self.pending_isr = None
        self._maybe_increment_high_watermark()
        # Fetches parked in an older term (followers' too) answer in this one.
        self.watchers.wake_all()

    def set_replicas(self, replicas: list[int], isr: list[int]) -> None:
        """The assignment or ISR changed within the leader's epoch (a reassignment adds or removes
        replicas): a leader starts tracking the followers that are new, and forgets those that left."""
        self.replicas = list(replicas)
        self.isr = list(isr)
        if self.is_leader:
            self._track(replicas)
            self._maybe_increment_high_watermark()
            self.watchers.wake_all()  # a follower no longer a replica is answered so

    def _track(self, replicas: list[int]) -> None:
        """Follow the fetch state of exactly ``replicas``' followers, keeping what is known of each."""
        now = _now_ms()
        followers = [r for r in replicas if r != self.local_id]
        self._follower_end_offsets = {r: self._follower_end_offsets.get(r, -1) for r in followers}
        self._follower_log_starts = {r: self._follower_log_starts.get(r, -1) for r in followers}
        self._follower_caught_up_ms = {r: self._follower_caught_up_ms.get(r, now) for r in followers}
        self._follower_previous_fetch_leo = {r: leo for r, leo in self._follower_previous_fetch_leo.items()
                                             if r in followers}

    def make_follower(self, leader_id: int, leader_epoch: int, replicas: list[int], isr: list[int]) -> None:
        """Stop leading: another broker leads (or none, -1) from ``leader_epoch`` on.  Produces and
        fetches waiting here answer now, with NOT_LEADER_OR_FOLLOWER."""
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.replicas = list(replicas)
        self.isr = list(isr)
        self._follower_end_offsets = {}
        self._follower_log_starts = {}
        self.leader_epoch_start_offset = None
        self.pending_isr = None
        self.watchers.wake_all()

    def restore_high_watermark(self, offset: int) -> None:
        """Start from a checkpointed high watermark, within the log."""
        self.high_watermark = max(self.log.log_start_offset, min(offset, self.log.log_end_offset))

    # -- replication, leader side ---------------------------------------------------------------

    def follower_fetched(self, replica: int, fetch_offset: int, now_ms: int, log_start: int = -1) -> list[int] | None:
        """A follower fetched from ``fetch_offset``, so it has everything below it: record its log end
        offset (and its log start offset, when the request gave it), move the high watermark, and
        return the ISR to propose if it has caught up and is not in it (Kafka's ISR expansion), else
        None."""
        if not self.is_leader or replica not in self._follower_end_offsets:
            return None
        if log_start >= 0 and self._follower_log_starts.get(replica) != log_start:
            self._follower_log_starts[replica] = log_start
            self.watchers.wake_all()  # a DeleteRecords may wait for it
        leo = self.log.log_end_offset
        self._follower_end_offsets[replica] = fetch_offset
        if fetch_offset >= leo or fetch_offset >= self._follower_previous_fetch_leo.get(replica, leo + 1):
            self._follower_caught_up_ms[replica] = now_ms
        self._follower_previous_fetch_leo[replica] = leo
        self._maybe_increment_high_watermark()
        if (replica not in self.isr and self.pending_isr is None and fetch_offset >= self.high_watermark
                and replica in self.replicas):
            return [r for r in self.replicas if r in self.isr or r == replica]
        return None

    def lagging_isr(self, now_ms: int, max_lag_ms: int) -> list[int] | None:
        """The ISR without followers that have not caught up within ``max_lag_ms`` (Kafka's ISR
        shrink), or None when every one keeps up."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        keep = [r for r in self.isr
                if r == self.local_id or now_ms - self._follower_caught_up_ms.get(r, now_ms) <= max_lag_ms]
        return keep if keep != self.isr else None

    # -- replication, follower side -------------------------------------------------------------

    def follower_appended(self, leader_high_watermark: int) -> None:
        """Records from the leader were appended (or none came): the high watermark is the leader's,
        up to what this replica has."""
        new = min(leader_high_watermark, self.log.log_end_offset)
        if new > self.high_watermark:
            self.high_watermark = new
            # Lets the log forget the ended transactions now below it (only a leader reads it).
            self.log.last_stable_offset(new)
        self.watchers.wake_all()

    async def append_as_follower(self, records: bytes, leader_high_watermark: int,
                                 leader_log_start: int = -1) -> None:
        """Append what the leader sent (its offsets kept), off the event loop when it is large, and
        take the leader's high watermark and log start offset.  LogError passes through."""
        if records:
            if len(records) > INLINE_APPEND_BYTES:
                await trio.to_thread.run_sync(self.log.append_as_follower, records)
            else:
                self.log.append_as_follower(records)
        self.follower_appended(leader_high_watermark)
        # Records deleted on the leader (DeleteRecords) go here too, as Kafka's follower moves its log
        # start on each fetch: else a failover to this replica would bring them back.  Never past this
        # replica's high watermark.
        start = min(leader_log_start, self.high_watermark)
        if start > self.log.log_start_offset:
            self.log.delete_records(start)

    def truncate_to(self, offset: int) -> int:
        """Drop everything from ``offset`` on (a follower's divergence from its leader); the new log
        end, which the high watermark does not exceed."""
        new_end = self.log.truncate_to(offset)
        self.high_watermark = min(self.high_watermark, new_end)
        return new_end

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empty the log and start it at ``offset`` (a follower behind the leader's log start)."""
        self.log.truncate_fully_and_start_at(offset)

    def last_fetched_epoch(self) -> int:
        """The leader epoch of the last batch in the log, -1 for none: a follower's divergence check."""
        epochs = self.log.leader_epochs()
        return epochs[-1][0] if epochs else -1

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_dir(self) -> Path:
        """The log dir (a ``log.dirs`` entry) holding this replica's log."""
        return Path(self.log.dir).parent

    def check_leader(self, current_leader_epoch: int = NO_EPOCH) -> None:
        """Raise KafkaError unless this replica leads at the epoch the client knows."""
        if not self.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER,
                             f"This broker is not the leader of {self.topic}-{self.index}.")
        error = check_leader_epoch(current_leader_epoch, self.leader_epoch)
        if error is not None:
            raise KafkaError(error)

    # -- writes ------------------------------------------------------------------------------

    def check_min_isr(self, min_insync_replicas: int) -> None:
        """Kafka's check before an acks=all leader append: enough in-sync replicas to be safe."""
        if len(self.isr) < min_insync_replicas:
            raise KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS,
                             f"The size of the current ISR {self.isr} is insufficient to satisfy the "
                             f"min.isr requirement of {min_insync_replicas} for partition "
                             f"{self.topic}-{self.index}")

    def append_as_leader(self, records: bytes | memoryview, now_ms: int, min_insync_replicas: int,
                         from_coordinator: bool = False) -> AppendInfo:
        """Validate and append one batch with acks=all's checks (the coordinators' writes; their
        transactional batches carry no sequence); LogError passes through with its Kafka code."""
        self.check_leader()
        self.check_min_isr(min_insync_replicas)
        return self.appended(self.write_to_log(records, self.leader_epoch, now_ms, from_coordinator))

    def write_to_log(self, records: bytes | memoryview, leader_epoch: int, now_ms: int,
                     from_coordinator: bool = False) -> tuple[int, int, int, bool]:
        """The log half of a leader append, checked by the caller beforehand: it touches the log
        only, so it may run on a worker thread; ``appended`` then accounts for it on the event loop.
        LogError passes through with its Kafka code."""
        return self.log.append(records, leader_epoch=leader_epoch, now_ms=now_ms,
                               from_coordinator=from_coordinator)

    def write_marker(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int) -> int:
        """Append a transaction marker as the leader; its offset.  LogError passes through
        (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED for a stale marker)."""
        self.check_leader()
        offset, _first = self.log.append_marker(producer_id, producer_epoch, commit, coordinator_epoch,
                                                self.leader_epoch)
        self._maybe_increment_high_watermark()
        self.watchers.wake_all()
        return offset

    def appended(self, result: tuple[int, int, int, bool]) -> AppendInfo:
        """Account for a log append (made here or on a worker thread): move the high watermark, and
        wake the followers' fetches (the rest wait for the high watermark, woken if it moved, as it
        does with a single replica in sync)."""
        base, last, append_time, _duplicate = result
        self._maybe_increment_high_watermark()
        self.watchers.wake_replicas()
        return AppendInfo(base, last, append_time, self.log.log_start_offset)

    def _maybe_increment_high_watermark(self) -> None:
        if not self.is_leader:
            return
        end = self.log.log_end_offset
        # While an ISR expansion is written, the joining follower counts already (Kafka's maximal ISR).
        isr = self.isr if self.pending_isr is None else sorted(set(self.isr) | set(self.pending_isr))
        candidates = [end] + [self._follower_end_offsets.get(r, -1) for r in isr if r != self.local_id]
        new = min(candidates)
        if new > self.high_watermark:
            self.high_watermark = new
            try:
                # Consumers' fetches parked below it are answered by the log first (delayed_fetch.py).
                self.log.high_watermark_moved(new)
            finally:
                self.watchers.wake_for_high_watermark()

    async def wait_for_acks(self, required_offset: int, min_insync_replicas: int,
                            timeout_s: float) -> ErrorCode:
        """The delayed produce of acks=all: wait until the high watermark reaches ``required_offset``.

        Kafka's answers: NONE; NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
        ``min.insync.replicas`` meanwhile; NOT_LEADER_OR_FOLLOWER when leadership moved; and
        REQUEST_TIMED_OUT at the deadline.  The records stay in the log in every case.
        """
        deadline = trio.current_time() + timeout_s
        while True:
            if not self.is_leader:
                return ErrorCode.NOT_LEADER_OR_FOLLOWER
            if self.high_watermark >= required_offset:
                if len(self.isr) < min_insync_replicas:
                    return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                return ErrorCode.NONE
            left = deadline - trio.current_time()
            if left <= 0:
                return ErrorCode.REQUEST_TIMED_OUT
            with parked_on([self.watchers]) as waiter:
                await waiter.wait(left)

    def delete_records(self, offset: int) -> int:
        """DeleteRecords on the leader: moves the log start offset up to ``offset`` (-1 means the high
        watermark), and returns that offset, which the low watermark must reach."""
        self.check_leader()
        if offset == -1:
            offset = self.high_watermark
        if self.high_watermark < offset <= self.log.log_end_offset:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE,
                             f"Cannot delete records of {self.topic}-{self.index} above its high "
                             f"watermark {self.high_watermark}.")
        before = self.log.log_start_offset
        self.log.delete_records(offset)
        if self.log.log_start_offset != before:
            self.watchers.wake_all()  # followers' waiting fetches tell them the new log start now
        return offset

    def low_watermark(self, alive: Container[int]) -> int:
        """The lowest log start offset of this replica and of the followers on live brokers (Kafka's
        lowWatermarkIfLeader): DeleteRecords is done once it reaches the offset asked for."""
        low = self.log.log_start_offset
        for replica, start in self._follower_log_starts.items():
            if replica in alive and start < low:
                low = start
        return low

    # -- reads -------------------------------------------------------------------------------

    def answer_on_append(self, fetch: DelayedFetch, tag: int, template: tuple[bytes, bytes, int],
                         fetch_offset: int, max_bytes: int) -> None:
        """A follower's fetch waiting at ``fetch_offset`` is answered by the next append there in this
        leader epoch, from the log itself (``replica/delayed_fetch.py``)."""
        self.log.answer_on_append(fetch, tag, template[0], template[1], fetch_offset, self.leader_epoch, max_bytes)

    def answer_on_high_watermark(self, fetch: DelayedFetch, tag: int, template: tuple[bytes, bytes, int],
                                 fetch_offset: int, max_bytes: int, read_committed: bool) -> None:
        """A consumer's fetch waiting at ``fetch_offset`` is answered by the next high-watermark move
        past it (``read_committed``: that moves the last stable offset past it), from the log itself
        (``replica/delayed_fetch.py``)."""
        self.log.answer_on_high_watermark(fetch, tag, template[0], template[1], fetch_offset, max_bytes,
                                          template[2], read_committed)

    def read_may_block(self, fetch_offset: int) -> bool:
        """Whether a read from ``fetch_offset`` reaches below the active segment, where the page cache
        may not hold it."""
        return fetch_offset < self.log.active_segment_base_offset

    def read_records(self, fetch_offset: int, max_bytes: int, min_one: bool, allow_zstd: bool,
                     follower: bool = False, read_committed: bool = False, zero_copy: bool = False,
                     cold: bool = False) -> FetchedData:
        """A fetch's read of this partition (on the event loop or a worker): the watermarks are read
        once, so the records and the watermarks reported with them agree.  A consumer reads below the
        high watermark (``read_committed``: below the last stable offset, with the aborted
        transactions of the range); a follower reads to the log end.

        ``zero_copy``: records of at least ZERO_COPY_MIN_BYTES come back as a LogSlice of the segment
        file, for the connection to sendfile, instead of being read into memory; ``cold`` marks a
        read below the active segment, which the connection then sends off the event loop."""
        high_watermark = self.high_watermark
        # Followers read to the log end and have no use for the last stable offset: replication
        # skips computing it.
        last_stable = high_watermark if follower else self.log.last_stable_offset(high_watermark)
        bound = None if follower else last_stable if read_committed else high_watermark
        aborted = None
        try:
            if zero_copy:
                data = self.log.read_slice(fetch_offset, max_bytes, min_one=min_one, allow_zstd=allow_zstd,
                                           max_offset=bound, min_slice=ZERO_COPY_MIN_BYTES, cold=cold)
                if cold and isinstance(data, LogSlice):
                    # The disk starts reading the whole range now, not a readahead window at a time
                    # as sendfile asks for it.
                    os.posix_fadvise(data.fileno(), data.position, len(data), os.POSIX_FADV_WILLNEED)
            else:
                data = self.log.read(fetch_offset, max_bytes, min_one=min_one, allow_zstd=allow_zstd,
                                     max_offset=bound)
            if read_committed and not follower:
                # Clients drop these transactions' records themselves (their batches carry the producer).
                aborted = self.log.aborted_transactions(fetch_offset, last_stable) if data else []
        except LogError as e:
            return FetchedData(e.code)
        return FetchedData(ErrorCode.NONE, high_watermark, last_stable, self.log.log_start_offset, data,
                           aborted_transactions=aborted)

    def told_all_since(self, told: tuple[int, int, int], fetch_offset: int, follower: bool,
                       read_committed: bool) -> bool:
        """Whether a fetcher told (high watermark, last stable offset, log start offset) has nothing
        new to learn: still those watermarks, and caught up at ``fetch_offset`` (a follower at the log
        end, a consumer at the high watermark or, reading committed, the last stable offset)."""
        high_watermark = self.high_watermark
        if told[0] != high_watermark:
            return False
        if follower:
            return (fetch_offset == self.log_end_offset and told[1] == high_watermark
                    and told[2] == self.log_start_offset)
        if not read_committed and fetch_offset != high_watermark:
            return False
        last_stable = self.last_stable_offset
        return (told[1] == last_stable and fetch_offset == (last_stable if read_committed else high_watermark)
                and told[2] == self.log_start_offset)

    def nothing_read(self, diverging_epoch: tuple[int, int] | None = None) -> FetchedData:
        """This partition's answer with no records: its watermarks only (and a follower's divergence)."""
        hw = self.high_watermark
        return FetchedData(ErrorCode.NONE, hw, hw, self.log.log_start_offset, b"", diverging_epoch=diverging_epoch)

    # -- lookups -------------------------------------------------------------------------------

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (the largest epoch <= ``leader_epoch``, where it ends)."""
        if leader_epoch == self.leader_epoch:
            # The current leader's epoch ends at the log end, as Kafka's leader answers.
            return self.leader_epoch, self.log.log_end_offset
        return self.log.end_offset_for_epoch(leader_epoch)

    def local_end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """What this replica's own log says of ``leader_epoch``: (the largest epoch <= it, where it ends)."""
        return self.log.end_offset_for_epoch(leader_epoch)

    @property
    def last_stable_offset(self) -> int:
        """Below every open transaction and every ended one whose marker is not yet below the high
        watermark: how far read_committed consumers read."""
        return self.log.last_stable_offset(self.high_watermark)

    def fetch_offset_for_timestamp(self, timestamp: int, from_client: bool = True,
                                   read_committed: bool = False) -> tuple[int, int] | None:
        """ListOffsets on the leader: (offset, timestamp) for a target, None for an unknown special value.

        Latest is the high watermark (the last stable offset for read_committed), and nothing at or
        above it is reported, so a consumer is never told of an offset it could lose or may not read.
        A new leader whose high watermark has not yet reached its log end as it was when it took over
        answers a client OFFSET_NOT_AVAILABLE instead (KIP-207): its high watermark still lags what
        earlier leaders may have told.
        """
        lagging = (from_client and self.leader_epoch_start_offset is not None
                   and self.leader_epoch_start_offset > self.high_watermark)
        fetchable = self.last_stable_offset if read_committed else self.high_watermark
        if timestamp == LATEST:
            if lagging:
                raise self._offset_not_available()
            return fetchable, -1
        if timestamp in (EARLIEST, EARLIEST_LOCAL):
            return self.log.log_start_offset, -1
        if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
            return -1, -1
        if timestamp == MAX_TIMESTAMP:
            found = self.log.max_timestamp()
        elif timestamp < 0:
            return None
        else:
            found = self.log.offset_for_timestamp(timestamp)
        if not found or found[0] >= fetchable:
            if lagging:
                raise self._offset_not_available()
            return -1, -1
        return found[0], found[1]

    def _offset_not_available(self) -> KafkaError:
        return KafkaError(ErrorCode.OFFSET_NOT_AVAILABLE,
                          f"The high watermark {self.high_watermark} of {self.topic}-{self.index} is behind "
                          f"the start offset {self.leader_epoch_start_offset} of epoch {self.leader_epoch}.")
