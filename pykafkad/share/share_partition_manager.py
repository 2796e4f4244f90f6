"""The share-partitions this broker leads and the share sessions reading them (Kafka's
SharePartitionManager): ShareFetch's acquisition and long-poll, acknowledgements, releases when a
session closes or its connection drops, and acquisition locks running out.

A share-partition is made on the first fetch of its group from it, starting where the group's
``share.auto.offset.reset`` says (latest by default: the high watermark).  Its state is held in
memory on the leader only: it is not yet written to ``__share_group_state``, so a broker restart or
a leader change starts the group's partitions afresh (records acquired or acknowledged before are
delivered again).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import trio

from pykafkad.config import BrokerConfig
from pykafkad.errors import KafkaError
from pykafkad.group_config import SHARE_AUTO_OFFSET_RESET, group_int, reset_duration_ms
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.replica.partition import Partition
from pykafkad.replica.replica_manager import ReplicaManager
from pykafkad.replica.watchers import parked_on
from pykafkad.share.share_partition import (
    AcknowledgeError,
    SharePartition,
    SharePartitionLimits,
    batch_extents,
)
from pykafkad.share.share_session import ShareSession, ShareSessions
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

# Kafka's group.share.max.share.sessions default.
MAX_SHARE_SESSIONS = 2000


@dataclass
class ShareFetched:
    """One partition's answer to a ShareFetch."""

    error: ErrorCode | int = ErrorCode.NONE
    message: str | None = None
    records: bytes | memoryview = b""
    acquired: list[tuple[int, int, int]] = field(default_factory=list)


class SharePartitionManager:
    """Every share-partition led here, and the share sessions."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.sessions = ShareSessions(MAX_SHARE_SESSIONS)
        self._partitions: dict[tuple[str, str, int], SharePartition] = {}
        # Set when a lock is taken that may run out before the expiry task's next wake-up.
        self._new_lock = trio.Event()

    # -- settings ------------------------------------------------------------------------------

    def limits(self, group: str) -> SharePartitionLimits:
        configs = self.metadata.group_configs.get(group, {})
        return SharePartitionLimits(
            delivery_count_limit=group_int(self.config, configs, "share.delivery.count.limit"),
            max_record_locks=group_int(self.config, configs, "share.partition.max.record.locks"),
            lock_duration_ms=group_int(self.config, configs, "share.record.lock.duration.ms"))

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

    def share_partition(self, group: str, topic: str, index: int) -> tuple[Partition, SharePartition]:
        """The partition led here and the group's share-partition of it (made now if new); KafkaError
        when this broker does not lead it."""
        partition = self.replicas.leader(topic, index)
        key = (group, topic, index)
        share = self._partitions.get(key)
        if share is None:
            share = self._partitions[key] = SharePartition(group, topic, index, self._start_offset(group, partition))
        share.move_start(partition.log.log_start_offset)
        return partition, share

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
                    max_bytes: int, min_bytes: int, max_wait_ms: int) -> dict[tuple[str, int], ShareFetched]:
        """Acquire records for ``member`` from the partitions ``wanted``, long-polling up to
        ``max_wait_ms`` until some are acquired (or ``min_bytes`` of them)."""
        deadline = trio.current_time() + max(0, max_wait_ms) / 1000
        limits = self.limits(group)
        while True:
            results: dict[tuple[str, int], ShareFetched] = {}
            watched = [self.replicas.shutdown_watchers]
            for topic, index in wanted:
                try:
                    partition, share = self.share_partition(group, topic, index)
                except KafkaError as e:
                    results[(topic, index)] = ShareFetched(e.code)
                    continue
                watched += [partition.watchers, share.watchers]
            with parked_on(watched) as waiter:
                total_records = total_bytes = 0
                for topic, index in wanted:
                    if (topic, index) in results:
                        continue
                    found = self._acquire(group, member, topic, index, max_records - total_records,
                                          max_bytes - total_bytes, limits)
                    results[(topic, index)] = found
                    total_records += sum(last - first + 1 for first, last, _ in found.acquired)
                    total_bytes += len(found.records)
                    if total_records >= max_records or total_bytes >= max_bytes:
                        break
                left = deadline - trio.current_time()
                errored = any(r.error != ErrorCode.NONE for r in results.values())
                if (total_records and total_bytes >= min_bytes) or errored or left <= 0 or self.replicas.shutting_down:
                    return results
                await waiter.wait(left)

    def _acquire(self, group: str, member: str, topic: str, index: int, max_records: int, max_bytes: int,
                 limits: SharePartitionLimits) -> ShareFetched:
        if max_records <= 0 or max_bytes <= 0:
            return ShareFetched()
        try:
            partition, share = self.share_partition(group, topic, index)
        except KafkaError as e:
            return ShareFetched(e.code)
        if not share.can_acquire(limits):
            return ShareFetched()
        data = partition.read_records(share.next_fetch_offset(), max_bytes, min_one=True, allow_zstd=True)
        if data.error == ErrorCode.OFFSET_OUT_OF_RANGE:
            share.move_start(partition.log.log_start_offset)
            data = partition.read_records(share.next_fetch_offset(), max_bytes, min_one=True, allow_zstd=True)
        if data.error != ErrorCode.NONE:
            return ShareFetched(data.error)
        records = bytes(data.records) if not isinstance(data.records, bytes) else data.records
        batches = batch_extents(records)
        acquired = share.acquire(member, batches, max_records, limits, trio.current_time())
        if not acquired:
            return ShareFetched()
        self._new_lock.set()
        # The whole batches up to the last acquired record: the client keeps what AcquiredRecords name.
        end = max((stop for first, _, stop in batches if first <= acquired[-1][1]), default=0)
        return ShareFetched(records=records[:end], acquired=acquired)

    # -- acknowledgements ------------------------------------------------------------------------

    def acknowledge(self, group: str, member: str, topic: str, index: int,
                    batches: list[tuple[int, int, list[int]]]) -> tuple[ErrorCode, str | None]:
        """Apply one partition's acknowledgement batches (already checked for shape)."""
        share = self._partitions.get((group, topic, index))
        try:
            partition = self.replicas.leader(topic, index)
        except KafkaError as e:
            return e.code, None
        if share is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        del partition
        limits = self.limits(group)
        try:
            for first, last, types in batches:
                share.acknowledge(member, first, last, types, limits)
        except AcknowledgeError as e:
            return e.code, e.message
        return ErrorCode.NONE, None

    def release(self, session: ShareSession) -> None:
        """The session's member's records in its partitions made available again."""
        limits = self.limits(session.group)
        for topic, index in session.partitions:
            share = self._partitions.get((session.group, topic, index))
            if share is not None and share.release_owner(session.member, limits):
                log.debug("released the records of %s in %s-%d for share group %s", session.member, topic,
                          index, session.group)

    def close_session(self, session: ShareSession) -> None:
        self.sessions.close(session)
        self.release(session)

    def connection_closed(self, connection: int) -> None:
        """A client's connection closed: its share sessions end and their records are released."""
        for session in self.sessions.of_connection(connection):
            self.close_session(session)

    # -- acquisition locks -------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Release records whose acquisition lock ran out, from now until cancelled."""
        task_status.started()
        while True:
            deadlines = [d for share in self._partitions.values() if (d := share.next_deadline()) is not None]
            with trio.move_on_at(min(deadlines) if deadlines else math.inf):
                await self._new_lock.wait()
            self._new_lock = trio.Event()
            now = trio.current_time()
            for share in self._partitions.values():
                if share.has_locks():
                    share.expire_locks(now, self.limits(share.group))
