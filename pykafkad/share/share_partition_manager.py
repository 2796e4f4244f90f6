"""The share-partitions this broker leads and the share sessions reading them (Kafka's
SharePartitionManager): ShareFetch's acquisition and long-poll, acknowledgements, releases when a
session closes or its connection drops, and acquisition locks running out.

A share-partition is loaded on the first fetch of its group from it: from the state the share
coordinator holds (``share_persister.py``), or, the first time, starting where the group's
``share.auto.offset.reset`` says (latest by default: the high watermark), written at once.  Every
acknowledgement is written before it is answered; releases and lock expiries are written as they
happen.  A write that fails (the coordinator refused it, or was unreachable for long) drops the
share-partition here, so the next fetch loads it again from what was last written.  When a group's
last share session here closes, its share-partitions are dropped too, once written.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import trio

from pykafkad import _rust_log
from pykafkad._rust_log import LogError
from pykafkad.config import BrokerConfig
from pykafkad.coordinator.share.share_state_records import ShareState, StateBatch
from pykafkad.errors import KafkaError
from pykafkad.group_config import DLQ_TOPIC_NAME, SHARE_AUTO_OFFSET_RESET, group_int, reset_duration_ms
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.replica.partition import Partition
from pykafkad.replica.replica_manager import ReplicaManager
from pykafkad.replica.watchers import parked_on
from pykafkad.share.dead_letters import DeadLetterError, DeadLetterWriter, dead_letter_records
from pykafkad.share.share_partition import (
    AcknowledgeError,
    SharePartition,
    SharePartitionLimits,
    aborted_batches,
    batch_extents,
    merged_ranges,
    without,
)
from pykafkad.share.share_persister import SharePersister
from pykafkad.share.share_session import ShareSession, ShareSessions
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

# Kafka's group.share.max.share.sessions default.
MAX_SHARE_SESSIONS = 2000
SHARE_VERSION = "share.version"
DEAD_LETTER_LEVEL = 2  # share.version 2: the share-group DLQ (Kafka 4.4)
DLQ_COPY_RECORD = "errors.deadletterqueue.copy.record.enable"
SHARE_ISOLATION_LEVEL = "share.isolation.level"
DEAD_LETTER_BACKOFF_S, DEAD_LETTER_BACKOFF_MAX_S = 0.1, 10.0
DEAD_LETTER_READ_BYTES = 1 << 20
# A fetch reads the log this much at a time, so it reads little more than what it can acquire.
READ_CHUNK_BYTES = 1 << 20


@dataclass
class ShareFetched:
    """One partition's answer to a ShareFetch."""

    error: ErrorCode | int = ErrorCode.NONE
    message: str | None = None
    records: bytes | memoryview = b""
    acquired: list[tuple[int, int, int]] = field(default_factory=list)


class SharePartitionManager:
    """Every share-partition led here, and the share sessions."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 persister: SharePersister, dead_letters: DeadLetterWriter) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.persister = persister
        self.dead_letters = dead_letters
        # Share-partitions whose dead letters are being written (one task each).
        self._dead_lettering: set[tuple[str, str, int]] = set()
        self.sessions = ShareSessions(MAX_SHARE_SESSIONS)
        self._partitions: dict[tuple[str, str, int], SharePartition] = {}
        # A share-partition being loaded: the others asking for it wait on its lock.
        self._loading: dict[tuple[str, str, int], trio.Lock] = {}
        # One write at a time per share-partition, each of its latest state.
        self._writing: dict[tuple[str, str, int], trio.Lock] = {}
        self._nursery: trio.Nursery | None = None
        # Set when a lock is taken that may run out before the expiry task's next wake-up.
        self._new_lock = trio.Event()

    # -- settings ------------------------------------------------------------------------------

    def limits(self, group: str) -> SharePartitionLimits:
        configs = self.metadata.group_configs.get(group, {})
        return SharePartitionLimits(
            delivery_count_limit=group_int(self.config, configs, "share.delivery.count.limit"),
            max_record_locks=group_int(self.config, configs, "share.partition.max.record.locks"),
            lock_duration_ms=group_int(self.config, configs, "share.record.lock.duration.ms"),
            dead_letters=bool(self._dead_letter_topic(group)),
            read_committed=configs.get(SHARE_ISOLATION_LEVEL, "").lower() == "read_committed")

    def _dead_letter_topic(self, group: str) -> str:
        """The group's dead-letter topic, while share.version 2 (Kafka's level for it) is on."""
        if self.metadata.features.level(SHARE_VERSION) < DEAD_LETTER_LEVEL:
            return ""
        return self.metadata.group_configs.get(group, {}).get(DLQ_TOPIC_NAME, "")

    def _start_offset(self, group: str, partition: Partition) -> int:
        reset = self.metadata.group_configs.get(group, {}).get(SHARE_AUTO_OFFSET_RESET, "latest").lower()
        if reset == "earliest":
            return partition.log.log_start_offset
        duration = reset_duration_ms(reset)
        if duration is not None:
            # The first record written at or after now minus the duration.
            found = partition.fetch_offset_for_timestamp(int(time.time() * 1000) - duration)
            if found is not None and found[0] >= 0:
                return found[0]
        return partition.high_watermark

    # -- share-partitions ----------------------------------------------------------------------

    async def share_partition(self, group: str, topic: str, index: int) -> tuple[Partition, SharePartition]:
        """The partition led here and the group's share-partition of it, loaded now if new here;
        KafkaError when this broker does not lead it or its state cannot be had."""
        partition = self.replicas.leader(topic, index)
        key = (group, topic, index)
        share = self._partitions.get(key)
        if share is None:
            lock = self._loading.setdefault(key, trio.Lock())
            async with lock:
                share = self._partitions.get(key)
                if share is None:
                    share = await self._load(group, partition)
                    partition = self.replicas.leader(topic, index)
                    if partition.leader_epoch != share.leader_epoch:
                        raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
                    self._partitions[key] = share
                    self._dead_letter_soon(share)
            if self._loading.get(key) is lock and not lock.statistics().tasks_waiting:
                del self._loading[key]
        share.move_start(partition.log.log_start_offset)
        return partition, share

    async def _load(self, group: str, partition: Partition) -> SharePartition:
        topic = self.metadata.topics.get(partition.topic)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        key = (group, topic.topic_id, partition.index)
        epoch = partition.leader_epoch
        found = await self.persister.read(key, epoch)
        if isinstance(found, ShareState) and found.start_offset >= 0:
            return SharePartition.restored(group, partition.topic, partition.index, found.start_offset,
                                           [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                                            for b in found.batches], epoch, found.state_epoch)
        if isinstance(found, tuple) and found[0] != ErrorCode.INVALID_REQUEST:
            raise KafkaError(_load_error(found[0]), found[1])
        # Never initialized (or initialized without an offset): start where the group says, and
        # write that at once, so a restart does not place it again.
        start = self._start_offset(group, partition)
        state_epoch = found.state_epoch if isinstance(found, ShareState) else 0
        code, message = await self.persister.initialize(key, state_epoch, start)
        if code == ErrorCode.NONE:
            found = await self.persister.read(key, epoch)
            if not isinstance(found, ShareState):
                code, message = found
        if code != ErrorCode.NONE:
            raise KafkaError(_load_error(code), message)
        return SharePartition(group, partition.topic, partition.index, start, epoch, state_epoch)

    def cached(self, group: str, topic: str, index: int) -> SharePartition | None:
        return self._partitions.get((group, topic, index))

    def on_leadership(self, partition: Partition, leads: bool) -> None:
        """This broker stopped leading ``partition``: its share-partitions go (the new leader serves them)."""
        if leads:
            return
        for key in [k for k in self._partitions if k[1:] == (partition.topic, partition.index)]:
            self._partitions.pop(key).watchers.wake_all()

    # -- ShareFetch ----------------------------------------------------------------------------

    async def fetch(self, group: str, member: str, wanted: list[tuple[str, int]], max_records: int,
                    max_bytes: int, max_wait_ms: int,
                    released: dict[tuple[str, int], tuple[tuple[int, int], ...]] | None = None,
                    record_limit: bool = False) -> dict[tuple[str, int], ShareFetched]:
        """Acquire records for ``member`` from the partitions ``wanted``, long-polling up to
        ``max_wait_ms`` until some are acquired (``record_limit``: never more than ``max_records``,
        where batches are otherwise taken whole).  ``released``: what this
        request's own acknowledgements released, per partition, which its first look leaves alone
        (Kafka acquires while those releases are still being written)."""
        deadline = trio.current_time() + max(0, max_wait_ms) / 1000
        limits = self.limits(group)
        held_back = released or {}
        while True:
            results: dict[tuple[str, int], ShareFetched] = {}
            watched = [self.replicas.shutdown_watchers]
            shares: dict[tuple[str, int], tuple[Partition, SharePartition]] = {}
            for topic, index in wanted:
                try:
                    shares[(topic, index)] = partition, share = await self.share_partition(group, topic, index)
                except KafkaError as e:
                    results[(topic, index)] = ShareFetched(e.code, e.message)
                    continue
                watched += [partition.watchers, share.watchers]
            with parked_on(watched) as waiter:
                total_records = total_bytes = 0
                for topic, index in wanted:
                    if (topic, index) in results:
                        continue
                    found = self._acquire(*shares[(topic, index)], member, max_records - total_records,
                                          max_bytes - total_bytes, limits, held_back.get((topic, index), ()),
                                          record_limit)
                    results[(topic, index)] = found
                    total_records += sum(last - first + 1 for first, last, _ in found.acquired)
                    total_bytes += len(found.records)
                    if total_records >= max_records or total_bytes >= max_bytes:
                        break
                left = deadline - trio.current_time()
                errored = any(r.error != ErrorCode.NONE for r in results.values())
                # Whatever was acquired goes out now, whatever its size: acquired records not
                # answered would stay locked to a member that never saw them.
                if total_records or errored or left <= 0 or self.replicas.shutting_down:
                    return results
                if held_back:
                    held_back = {}
                    continue
                await waiter.wait(left)

    def _acquire(self, partition: Partition, share: SharePartition, member: str, max_records: int, max_bytes: int,
                 limits: SharePartitionLimits, held_back: tuple[tuple[int, int], ...],
                 record_limit: bool = False) -> ShareFetched:
        """Read the log from the share-partition's next fetch offset, a chunk at a time, and acquire
        for ``member`` until ``max_records`` are (whole batches) or ``max_bytes`` are read: a fetch
        never reads much more of the log than the records it can take."""
        if max_records <= 0 or max_bytes <= 0 or self._partitions.get(_key(share)) is not share:
            return ShareFetched()
        if not share.can_acquire(limits):
            return ShareFetched()
        offset = share.next_fetch_offset()
        pieces: list[bytes] = []
        acquired: list[tuple[int, int, int]] = []
        taken = read = 0
        while taken < max_records and read < max_bytes:
            chunk = min(READ_CHUNK_BYTES, max_bytes - read)
            committed = limits.read_committed
            data = partition.read_records(offset, chunk, min_one=not pieces, allow_zstd=True, read_committed=committed)
            if data.error == ErrorCode.OFFSET_OUT_OF_RANGE and not pieces:
                share.move_start(partition.log.log_start_offset)
                offset = share.next_fetch_offset()
                data = partition.read_records(offset, chunk, min_one=True, allow_zstd=True, read_committed=committed)
            if data.error != ErrorCode.NONE:
                if pieces:
                    break
                return ShareFetched(data.error)
            records = data.records if isinstance(data.records, bytes) else bytes(data.records)
            batches = batch_extents(records)
            if not batches:
                break
            got = share.acquire(member, batches, max_records - taken, limits, trio.current_time(), held_back,
                                record_limit)
            if got and data.aborted_transactions:
                # read_committed: what aborted transactions wrote is archived, never delivered.
                dropped = tuple(aborted_batches(records, data.aborted_transactions))
                if any([share.archive_acquired(member, first, last) for first, last in dropped]):
                    self._persist_soon(share)
                got = [(first, last, count) for f, la, count in got for first, last in without((f, la), dropped)]
            if got:
                # The whole batches up to the last acquired record: the client keeps what
                # AcquiredRecords name.
                end = max((stop for first, _, stop in batches if first <= got[-1][1]), default=0)
                pieces.append(records[:end])
                acquired += got
                taken += sum(last - first + 1 for first, last, _ in got)
            read += batches[-1][2]
            offset = batches[-1][1] + 1
            if not share.can_acquire(limits):
                break
        if not acquired:
            return ShareFetched()
        self._new_lock.set()
        return ShareFetched(records=b"".join(pieces), acquired=acquired if record_limit else merged_ranges(acquired))

    # -- acknowledgements ------------------------------------------------------------------------

    async def acknowledge(self, group: str, member: str, topic: str, index: int,
                          batches: list[tuple[int, int, list[int]]]) -> tuple[ErrorCode, str | None]:
        """Apply one partition's acknowledgement batches (already checked for shape), and answer once
        they are written."""
        try:
            self.replicas.leader(topic, index)
        except KafkaError as e:
            return ErrorCode(e.code), None
        share = self._partitions.get((group, topic, index))
        if share is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        limits = self.limits(group)
        try:
            for first, last, types in batches:
                share.acknowledge(member, first, last, types, limits, trio.current_time())
        except AcknowledgeError as e:
            code, message = e.code, e.message
        else:
            code, message = ErrorCode.NONE, None
        written = await self.persist(share)
        self._dead_letter_soon(share)
        return (code, message) if written == ErrorCode.NONE else (written, None)

    async def persist(self, share: SharePartition) -> ErrorCode:
        """Write the share-partition's state if it changed since the last write; on failure it is
        dropped here, to be loaded again from what was written."""
        key = _key(share)
        async with self._writing.setdefault(key, trio.Lock()):
            if share.persisted >= share.changes:
                return ErrorCode.NONE
            changes = share.changes
            batches, done = share.persisted_state()
            topic = self.metadata.topics.get(share.topic)
            if topic is None:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            code, message = await self.persister.write(
                (share.group, topic.topic_id, share.index), share.state_epoch, share.leader_epoch, share.start_offset,
                [StateBatch(*b) for b in batches], done)
            if code == ErrorCode.NONE:
                share.persisted = max(share.persisted, changes)
                return code
        log.warning("the state of share group %s on %s-%d was not written (%s%s); it is loaded again",
                    share.group, share.topic, share.index, code.name, f": {message}" if message else "")
        if self._partitions.get(key) is share:
            del self._partitions[key]
            share.watchers.wake_all()
        return _load_error(code)

    def _persist_soon(self, share: SharePartition) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(self.persist, share)
        self._dead_letter_soon(share)

    # -- dead letters ------------------------------------------------------------------------------

    def _dead_letter_soon(self, share: SharePartition) -> None:
        key = _key(share)
        if self._nursery is not None and key not in self._dead_lettering and share.dead_letters():
            self._dead_lettering.add(key)
            self._nursery.start_soon(self._dead_letter, share)

    async def _dead_letter(self, share: SharePartition) -> None:
        """Write the share-partition's ARCHIVING records to the group's dead-letter topic, then archive
        them; a failed write is tried again (with a growing pause) while this broker serves it."""
        key = _key(share)
        backoff = DEAD_LETTER_BACKOFF_S
        try:
            while self._partitions.get(key) is share and (pending := share.dead_letters()):
                first, last, count, reason = pending[0]
                topic = self._dead_letter_topic(share.group)
                try:
                    if topic:
                        records = self._read(share, first, last)
                        copy = self.metadata.group_configs.get(share.group, {}).get(DLQ_COPY_RECORD, "false")
                        letters = dead_letter_records(records, share.topic, share.index, share.group,
                                                      dict.fromkeys(range(first, last + 1), count), reason,
                                                      copy.lower() == "true")
                        if letters:
                            await self.dead_letters.write(share.group, topic, (share.topic, share.index), letters)
                    else:
                        log.warning("share group %s has no dead-letter topic any more: records %d-%d of %s-%d are "
                                    "archived without one", share.group, first, last, share.topic, share.index)
                except (DeadLetterError, KafkaError, LogError) as e:
                    log.warning("share group %s: records %d-%d of %s-%d not yet in its dead-letter topic (%s); "
                                "trying again in %.1f s", share.group, first, last, share.topic, share.index, e,
                                backoff)
                    await trio.sleep(backoff)
                    backoff = min(backoff * 2, DEAD_LETTER_BACKOFF_MAX_S)
                    continue
                backoff = DEAD_LETTER_BACKOFF_S
                share.dead_lettered(first, last)
                await self.persist(share)
        finally:
            self._dead_lettering.discard(key)

    def _read(self, share: SharePartition, first: int,
              last: int) -> list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
        """The records of ``[first, last]`` from the partition's log, decoded (only for dead letters)."""
        partition = self.replicas.leader(share.topic, share.index)
        found = []
        offset = first
        while offset <= last:
            data = partition.read_records(offset, DEAD_LETTER_READ_BYTES, min_one=True, allow_zstd=True)
            if data.error != ErrorCode.NONE:
                raise KafkaError(data.error)
            decoded = _rust_log.decode_batches(bytes(data.records))  # type: ignore[arg-type]
            if not decoded:
                break
            found += [r for r in decoded if first <= r[0] <= last]
            offset = max(offset, decoded[-1][0] + 1)
        return found

    def release(self, session: ShareSession) -> None:
        """The session's member's records in its partitions made available again."""
        limits = self.limits(session.group)
        for topic, index in session.partitions:
            share = self._partitions.get((session.group, topic, index))
            if share is not None and share.release_owner(session.member, limits):
                self._persist_soon(share)

    def close_session(self, session: ShareSession) -> None:
        self.sessions.close(session)
        self.release(session)
        if not self.sessions.has_group(session.group) and self._nursery is not None:
            self._nursery.start_soon(self._group_left, session.group)

    async def _group_left(self, group: str) -> None:
        """The group's last share session here closed: once what it released is written, its
        share-partitions leave the cache (Kafka's onGroupEmpty), so the next fetch loads what the
        share coordinator holds then (offsets reset or deleted meanwhile included)."""
        for key, share in [(k, s) for k, s in self._partitions.items() if k[0] == group]:
            if share.dead_letters():
                continue  # its dead-letter task still needs it
            if await self.persist(share) != ErrorCode.NONE:
                continue  # (dropped already)
            if not self.sessions.has_group(group) and self._partitions.get(key) is share:
                del self._partitions[key]
                share.watchers.wake_all()

    def connection_closed(self, connection: int) -> None:
        """A client's connection closed: its share sessions end and their records are released."""
        for session in self.sessions.of_connection(connection):
            self.close_session(session)

    # -- acquisition locks -------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Release records whose acquisition lock ran out, from now until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            while True:
                deadlines = [d for share in self._partitions.values() if (d := share.next_deadline()) is not None]
                with trio.move_on_at(min(deadlines) if deadlines else math.inf):
                    await self._new_lock.wait()
                self._new_lock = trio.Event()
                now = trio.current_time()
                for share in list(self._partitions.values()):
                    if share.has_locks() and share.expire_locks(now, self.limits(share.group)):
                        self._persist_soon(share)


def _key(share: SharePartition) -> tuple[str, str, int]:
    return share.group, share.topic, share.index


def _load_error(code: ErrorCode | int) -> ErrorCode:
    """How the share coordinator's refusal is told to a share consumer (Kafka's
    SharePartition.fetchPersisterError): a fenced leader is no longer the leader, the rest is the
    server's."""
    if code in (ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.FENCED_STATE_EPOCH, ErrorCode.NOT_LEADER_OR_FOLLOWER):
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID):
        return ErrorCode(code)
    return ErrorCode.UNKNOWN_SERVER_ERROR
