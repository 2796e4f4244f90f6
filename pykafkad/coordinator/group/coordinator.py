"""The group coordinator: this broker coordinates the groups of the ``__consumer_offsets``
partitions it leads, and routes each of their requests to the actor task that owns the group.

As Kafka's GroupMetadataManager, it follows leadership of that topic's partitions: when this
broker starts leading one it replays the partition (on a worker thread) and starts an actor per
group found, answering COORDINATOR_LOAD_IN_PROGRESS meanwhile; when it stops, the partition's
actors end and their requests get NOT_COORDINATOR, so clients find the new leader.  At start-up
the partitions led here are loaded before the broker serves, so a restarted broker, even after
kill -9, has its groups and committed offsets back.  It creates the topic on first use with
Kafka's settings and ``offsets.topic.replication.factor``, and answers a request that wrote only
once the write reached the in-sync replicas (``offsets.commit.timeout.ms``), so an acknowledged
commit survives the loss of the coordinator.  The routing table is touched only between awaits
on the Trio thread; a group's state lives only in its actor (``pykafkad.coordinator.group.group``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import trio

from pykafkad._rust_log import LogError
from pykafkad.config import assignor_names
from pykafkad.coordinator.coordinator_partitions import CoordinatorPartitions
from pykafkad.coordinator.group.consumer_group import ConsumerGroupConfig
from pykafkad.coordinator.group.group import GroupActor, GroupConfig, now_ms
from pykafkad.coordinator.group.offsets_store import (
    OFFSETS_TOPIC,
    OFFSETS_TOPIC_CONFIGS,
    LoadedGroups,
    PendingOffsets,
    group_key,
    offset_key,
    partition_for,
    read_groups,
)
from pykafkad.coordinator.group.requests import GroupRequest, TopicDeleted, TransactionEnded, Unload
from pykafkad.coordinator.group.share_group import ShareGroupConfig
from pykafkad.coordinator.internal_topic_log import encode_batch
from pykafkad.errors import KafkaError
from pykafkad.group_config import CONSUMER_HEARTBEAT_INTERVAL_MS, CONSUMER_SESSION_TIMEOUT_MS
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.controller import Controller
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.metadata.model import TopicInfo
    from pykafkad.replica.partition import Partition
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

OFFSETS_TOPIC_WAIT_S = 30.0
def coordinator_error(code: ErrorCode) -> ErrorCode:
    """How a failed ``__consumer_offsets`` append is told to group clients (Kafka's mapping)."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.FENCED_LEADER_EPOCH):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return code


class GroupCoordinator:
    """This broker's coordinator for the groups of the offsets partitions it leads."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 controller: Controller) -> None:
        self.broker_config = config
        self.metadata = metadata
        self.replicas = replicas
        self.controller = controller
        c = config
        self.config = GroupConfig(
            min_session_timeout_ms=c["group.min.session.timeout.ms"],
            max_session_timeout_ms=c["group.max.session.timeout.ms"],
            initial_rebalance_delay_ms=c["group.initial.rebalance.delay.ms"],
            max_size=c["group.max.size"],
            offsets_retention_ms=c["offsets.retention.minutes"] * 60_000,
            retention_check_interval_ms=c["offsets.retention.check.interval.ms"],
            offset_metadata_max_bytes=c["offset.metadata.max.bytes"],
            consumer=ConsumerGroupConfig(
                session_timeout_ms=c["group.consumer.session.timeout.ms"],
                heartbeat_interval_ms=c["group.consumer.heartbeat.interval.ms"],
                max_size=c["group.consumer.max.size"],
                assignors=tuple(assignor_names(c["group.consumer.assignors"])),
                assignment_interval_ms=c["group.consumer.assignment.interval.ms"],
            ),
            migration_policy=c["group.consumer.migration.policy"],
            share=ShareGroupConfig(
                session_timeout_ms=c["group.share.session.timeout.ms"],
                heartbeat_interval_ms=c["group.share.heartbeat.interval.ms"],
                max_size=c["group.share.max.size"],
                assignment_interval_ms=c["group.share.assignment.interval.ms"],
            ),
        )
        self._actors: dict[str, GroupActor] = {}
        self._nursery: trio.Nursery | None = None
        # The offsets partitions whose groups this broker coordinates.
        self.partitions = CoordinatorPartitions(OFFSETS_TOPIC, read_groups, self._loaded, self._dropped)
        # Per group, the offset its last append ends at, until the high watermark passes it.
        self._written: dict[str, int] = {}
        # Producers with transactional offsets not yet ended, and the groups holding them.
        self._txn_groups: dict[int, set[str]] = {}

    # -- the internal topic ----------------------------------------------------------------------

    @property
    def num_partitions(self) -> int:
        topic = self.metadata.topics.get(OFFSETS_TOPIC)
        if topic is not None:
            return len(topic.partitions)
        return self.broker_config["offsets.topic.num.partitions"]

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    async def create_offsets_topic(self) -> None:
        """Create ``__consumer_offsets`` on first use, as Kafka does (from FindCoordinator), with its logs
        opened on a worker thread; KafkaError when it cannot be (TOPIC_ALREADY_EXISTS while a concurrent
        creation is under way, INVALID_REPLICATION_FACTOR while fewer brokers are up than
        ``offsets.topic.replication.factor``)."""
        if self.metadata.topics.get(OFFSETS_TOPIC) is None:
            c = self.broker_config
            await self.controller.create_topic(OFFSETS_TOPIC, c["offsets.topic.num.partitions"],
                                               c["offsets.topic.replication.factor"],
                                               dict(OFFSETS_TOPIC_CONFIGS), internal=True)

    async def _ensure_offsets_topic(self) -> None:
        """A group request that writes, before any FindCoordinator (raw clients may skip it): create
        the topic first, or wait for the creation already under way."""
        if self.metadata.topics.get(OFFSETS_TOPIC) is not None:
            return
        try:
            await self.create_offsets_topic()
        except KafkaError as e:
            if e.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                log.warning("cannot create %s: %s", OFFSETS_TOPIC, e)
                return
            # A creation that fails changes nothing in the cache: bounded, then the request is
            # answered COORDINATOR_NOT_AVAILABLE and the client retries.
            with trio.move_on_after(OFFSETS_TOPIC_WAIT_S):
                await self.metadata.wait_for(lambda: OFFSETS_TOPIC in self.metadata.topics)

    def write(self, group_id: str, records: list[tuple[bytes, bytes | None]],
              producer: tuple[int, int] | None = None) -> ErrorCode:
        """Append a group's records to its ``__consumer_offsets`` partition (in ``producer``'s
        transaction, for TxnOffsetCommit); Kafka's error on failure.  The request that wrote is
        answered once the records are replicated (``call``)."""
        partition = self.replicas.get(OFFSETS_TOPIC, self.partition_for(group_id))
        if partition is None:
            return ErrorCode.NOT_COORDINATOR
        try:
            now = now_ms()
            info = partition.append_as_leader(encode_batch(list(records), now, producer), now,
                                              self.replicas.min_insync_replicas(partition),
                                              from_coordinator=producer is not None)
        except KafkaError as e:
            log.warning("writing group %s to %s failed: %s", group_id, OFFSETS_TOPIC, e)
            return coordinator_error(e.code)
        except LogError as e:
            log.error("writing group %s to %s failed: %s", group_id, OFFSETS_TOPIC, e)
            # A storage failure (a log closed under the write included) is NOT_COORDINATOR, which
            # clients retry after finding the coordinator again, as Kafka answers.
            return coordinator_error(ErrorCode(e.code))
        self._written[group_id] = info.last_offset + 1
        if producer is not None:
            self._txn_groups.setdefault(producer[0], set()).add(group_id)
        return ErrorCode.NONE

    async def _replicated(self, group_id: str, request: GroupRequest, result: dict[str, Any]) -> dict[str, Any]:
        """``result``, once what the group wrote is below the high watermark; else the request's answer
        with Kafka's error (COORDINATOR_NOT_AVAILABLE, or NOT_COORDINATOR when leadership moved)."""
        end = self._written.get(group_id)
        if end is None:
            return result
        partition = self.replicas.get(OFFSETS_TOPIC, self.partition_for(group_id))
        if partition is None:
            code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        elif partition.high_watermark >= end:
            code = ErrorCode.NONE
        else:
            code = await partition.wait_for_acks(end, self.replicas.min_insync_replicas(partition),
                                                 self.broker_config["offsets.commit.timeout.ms"] / 1000)
        if code == ErrorCode.NONE:
            if self._written.get(group_id) == end:
                del self._written[group_id]
            return result
        log.warning("group %s: %s of %s-%d up to offset %d not replicated: %s", group_id, type(request).__name__,
                    OFFSETS_TOPIC, self.partition_for(group_id), end, code.name)
        return request.error_reply(group_id, coordinator_error(code))

    # -- the topics consumer-protocol groups assign (TopicImage) --------------------------------------

    def topic(self, name: str) -> tuple[uuid.UUID, int] | None:
        info = self.metadata.topics.get(name)
        return None if info is None else (info.topic_id, len(info.partitions))

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        info = self.metadata.topics_by_id.get(topic_id)
        return None if info is None else info.name

    def regex_candidates(self) -> Iterator[str]:
        return (info.name for info in self.metadata.topics.values() if not info.internal)

    def consumer_timeouts(self, group_id: str) -> tuple[int, int]:
        configs = self.metadata.group_configs.get(group_id, {})
        c = self.config.consumer
        return (int(configs.get(CONSUMER_SESSION_TIMEOUT_MS, c.session_timeout_ms)),
                int(configs.get(CONSUMER_HEARTBEAT_INTERVAL_MS, c.heartbeat_interval_ms)))

    def has_partition(self, topic: str, partition: int) -> bool:
        """Whether the cluster has this partition now (offsets of others are refused or removed)."""
        info = self.metadata.topics.get(topic)
        return info is not None and 0 <= partition < len(info.partitions)

    # -- leadership of the offsets partitions ----------------------------------------------------

    def on_leadership(self, partition: Partition, leads: bool) -> None:
        """The replica manager's news that this broker started or stopped leading ``partition``."""
        self.partitions.on_leadership(partition, leads)

    def _loaded(self, partition: Partition, read: tuple[LoadedGroups, PendingOffsets, int], _epoch: int) -> None:
        """An offsets partition this broker now leads was replayed: an actor per group found."""
        groups, pending, records = read
        self._drop_offsets_of_deleted_topics(groups)
        loaded = 0
        for group_id, (stored, offsets) in groups.items():
            if stored is None and not offsets:
                continue
            stale = self._actors.pop(group_id, None)
            if stale is not None:
                self._nursery_start(self._unload, stale)
            self._spawn(group_id).load(stored, offsets, pending.get(group_id))
            for producer_id in pending.get(group_id, {}):
                self._txn_groups.setdefault(producer_id, set()).add(group_id)
            loaded += 1
        if records:
            log.info("loaded %d group(s) from %d record(s) of %s-%d", loaded, records, OFFSETS_TOPIC,
                     partition.index)

    def _dropped(self, index: int) -> None:
        """This broker stopped coordinating the groups of offsets partition ``index``: their actors end."""
        unloaded = 0
        for group_id, actor in list(self._actors.items()):
            if self.partition_for(group_id) == index:
                del self._actors[group_id]
                self._written.pop(group_id, None)
                self._nursery_start(self._unload, actor)
                unloaded += 1
        if unloaded:
            log.info("unloaded %d group(s) of %s-%d", unloaded, OFFSETS_TOPIC, index)

    async def _unload(self, actor: GroupActor) -> None:
        send, _receive = trio.open_memory_channel[dict[str, Any]](1)
        try:
            await actor.send.send((Unload(), send))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # ended already

    def _nursery_start(self, fn: Any, *args: Any) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn, *args)

    async def _check_coordinator(self, group_id: str, request: GroupRequest) -> ErrorCode | None:
        """None when this broker coordinates ``group_id`` now, else the error to answer with."""
        if OFFSETS_TOPIC not in self.metadata.topics:
            # Nothing was ever written: a read sees an empty group; a write waits for the topic.
            return ErrorCode.COORDINATOR_NOT_AVAILABLE if request.writes else None
        return await self.partitions.check(self.partition_for(group_id))

    # -- transactional offsets --------------------------------------------------------------------

    def on_marker(self, partition: Partition, producer_id: int, commit: bool) -> None:
        """A transaction marker was written (and replicated) here as leader: the producer's
        transactional offsets in that partition's groups count now, or go."""
        if partition.topic != OFFSETS_TOPIC:
            return
        groups = self._txn_groups.get(producer_id, set())
        ended = {g for g in groups if self.partition_for(g) == partition.index}
        groups -= ended
        if not groups:
            self._txn_groups.pop(producer_id, None)
        for group_id in ended:
            self._nursery_start(self.call, group_id, TransactionEnded(producer_id, commit))

    # -- removing a deleted topic's offsets ------------------------------------------------------

    def _drop_offsets_of_deleted_topics(self, groups: LoadedGroups) -> None:
        """Finish a topic deletion a crash cut short: the topic left the metadata but its offsets'
        tombstones were not all written.  Commits to partitions that do not exist are refused, so
        an offset of a partition the cluster lacks can only be such a leftover."""
        for group_id, (stored, offsets) in list(groups.items()):
            stale = sorted(tp for tp in offsets if not self.has_partition(*tp))
            if not stale:
                continue
            records: list[tuple[bytes, bytes | None]] = [(offset_key(group_id, t, p), None) for t, p in stale]
            dead = len(stale) == len(offsets) and (stored is None or not stored.members)
            if dead:
                records.append((group_key(group_id), None))
            if self.write(group_id, records) != ErrorCode.NONE:
                continue
            for tp in stale:
                del offsets[tp]
            if dead:
                groups[group_id] = (None, offsets)
            log.info("group %s: removed %d offset(s) of deleted topics", group_id, len(stale))

    async def on_topic_deleted(self, topic: str) -> None:
        """Remove a deleted topic's committed offsets from every group coordinated here, with
        tombstones in ``__consumer_offsets`` (so it survives restarts).  The broker that deleted
        the topic awaits this before acknowledging; every broker runs it when its cache drops the
        topic (``topic_removed``)."""
        removed = 0
        for group_id in list(self._actors):
            result = await self.call(group_id, TopicDeleted(topic))
            if result["error_code"] != ErrorCode.NONE:
                # The next load finishes the removal (``_drop_offsets_of_deleted_topics``).
                log.error("group %s: removing offsets of deleted topic %s failed: %s",
                          group_id, topic, ErrorCode(result["error_code"]).name)
            removed += result["removed"]
        if removed:
            log.info("removed %d committed offset(s) of deleted topic %s", removed, topic)

    def topic_removed(self, topic: TopicInfo) -> None:
        """The metadata cache dropped ``topic``: remove its offsets here too (unless it is back)."""
        if topic.name != OFFSETS_TOPIC:
            self._nursery_start(self._remove_offsets_of, topic.name)

    async def _remove_offsets_of(self, name: str) -> None:
        if name not in self.metadata.topics:
            await self.on_topic_deleted(name)

    # -- actors ----------------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load the offsets partitions this broker leads, then follow leadership until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await self.partitions.load_led(nursery, self.replicas)
            task_status.started()
            await trio.sleep_forever()

    def _spawn(self, group_id: str) -> GroupActor:
        assert self._nursery is not None, "the group coordinator is not running"
        actor = GroupActor(group_id, self.config, self, self._forget)
        self._actors[group_id] = actor
        self._nursery.start_soon(actor.run, name=f"group:{group_id}")
        return actor

    def _forget(self, actor: GroupActor) -> None:
        if self._actors.get(actor.group_id) is actor:
            del self._actors[actor.group_id]

    async def call(self, group_id: str, request: GroupRequest) -> dict[str, Any]:
        """Send one request to the group's actor and wait for its answer (held ones included); a broker
        that does not coordinate the group answers NOT_COORDINATOR in the request's shape."""
        if request.writes:
            await self._ensure_offsets_topic()
        while True:
            error = await self._check_coordinator(group_id, request)
            if error is not None:
                return request.error_reply(group_id, error)
            actor = self._actors.get(group_id) or self._spawn(group_id)
            send, receive = trio.open_memory_channel[dict[str, Any]](1)
            try:
                await actor.send.send((request, send))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                continue  # the actor ended (group deleted or unloaded) just now: look again
            with receive:
                try:
                    result = await receive.receive()
                except trio.EndOfChannel:
                    continue
            if request.replicated:
                result = await self._replicated(group_id, request, result)
            return result

    def group_ids(self) -> list[str]:
        return list(self._actors)

    async def groups_loaded(self) -> bool:
        """Whether every offsets partition this broker leads is loaded (after a short wait), so
        ``group_ids`` names all its groups."""
        return await self.partitions.loads_finished()
