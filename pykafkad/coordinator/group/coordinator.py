"""The group coordinator: routes each group request to the actor task that owns the group.

It also owns the ``__consumer_offsets`` topic: it loads every partition of it before the
broker accepts connections (so a restarted broker, even after kill -9, has its groups and
committed offsets back), creates it on first use with Kafka's settings, and appends the
records groups write.  The routing table is touched only between awaits on the Trio thread;
a group's state lives only in its actor (``pykafkad.coordinator.group.group``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from pykafkad._rust_log import LogError
from pykafkad.coordinator.group.group import GroupActor, GroupConfig, now_ms
from pykafkad.coordinator.group.offsets_store import (
    OFFSETS_TOPIC,
    OFFSETS_TOPIC_CONFIGS,
    GroupKey,
    OffsetAndMetadata,
    OffsetKey,
    StoredGroup,
    decode_group_value,
    decode_key,
    decode_offset_value,
    encode_batch,
    group_key,
    offset_key,
    partition_for,
    read_partition,
)
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.controller import Controller
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

# Group requests that may write to ``__consumer_offsets`` (and so need it to exist).
OFFSETS_TOPIC_WAIT_S = 30.0
WRITING_REQUESTS = frozenset({"join", "sync", "heartbeat", "leave", "commit", "delete", "offset_delete"})


class GroupCoordinator:
    """This broker's coordinator for every group (a single broker coordinates them all)."""

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
        )
        self._actors: dict[str, GroupActor] = {}
        self._nursery: trio.Nursery | None = None

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
        opened on a worker thread; a concurrent caller gets KafkaError(TOPIC_ALREADY_EXISTS) meanwhile."""
        if self.metadata.topics.get(OFFSETS_TOPIC) is None:
            await self.controller.create_topic(OFFSETS_TOPIC, self.broker_config["offsets.topic.num.partitions"], 1,
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
                raise
            # A creation that fails changes nothing in the cache: bounded, the actor then answers
            # COORDINATOR_NOT_AVAILABLE and the client retries.
            with trio.move_on_after(OFFSETS_TOPIC_WAIT_S):
                await self.metadata.wait_for(lambda: OFFSETS_TOPIC in self.metadata.topics)

    def write(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append a group's records to its ``__consumer_offsets`` partition; Kafka's error on failure."""
        partition = self.replicas.get(OFFSETS_TOPIC, self.partition_for(group_id))
        if partition is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        try:
            now = now_ms()
            partition.append_as_leader(encode_batch(list(records), now), now,
                                       self.replicas.min_insync_replicas(partition))
        except KafkaError as e:
            log.error("writing group %s to %s failed: %s", group_id, OFFSETS_TOPIC, e)
            return ErrorCode.NOT_COORDINATOR
        except LogError as e:
            log.error("writing group %s to %s failed: %s", group_id, OFFSETS_TOPIC, e)
            if getattr(e, "code", None) in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
                return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
            return ErrorCode.UNKNOWN_SERVER_ERROR
        return ErrorCode.NONE

    def has_partition(self, topic: str, partition: int) -> bool:
        """Whether the cluster has this partition now (offsets of others are refused or removed)."""
        info = self.metadata.topics.get(topic)
        return info is not None and 0 <= partition < len(info.partitions)

    def _load(self) -> dict[str, tuple[StoredGroup | None, dict[tuple[str, int], OffsetAndMetadata]]]:
        groups: dict[str, tuple[StoredGroup | None, dict[tuple[str, int], OffsetAndMetadata]]] = {}
        topic = self.metadata.topics.get(OFFSETS_TOPIC)
        if topic is None:
            return groups
        records = 0
        for p in topic.partitions:
            partition = self.replicas.get(OFFSETS_TOPIC, p.index)
            if partition is None:
                continue
            for key, value in read_partition(partition.log):
                if key is None:
                    continue
                k = decode_key(key)
                records += 1
                if isinstance(k, OffsetKey):
                    stored, offsets = groups.setdefault(k.group, (None, {}))
                    if value is None:
                        offsets.pop((k.topic, k.partition), None)
                    else:
                        offsets[(k.topic, k.partition)] = decode_offset_value(value)
                elif isinstance(k, GroupKey):
                    _, offsets = groups.setdefault(k.group, (None, {}))
                    groups[k.group] = (None if value is None else decode_group_value(value), offsets)
        self._drop_offsets_of_deleted_topics(groups)
        live = {g: v for g, v in groups.items() if v[0] is not None or v[1]}
        log.info("loaded %d group(s) from %d record(s) of %s", len(live), records, OFFSETS_TOPIC)
        return live

    def _drop_offsets_of_deleted_topics(
        self, groups: dict[str, tuple[StoredGroup | None, dict[tuple[str, int], OffsetAndMetadata]]],
    ) -> None:
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
        """Remove a deleted topic's committed offsets from every group, with tombstones in
        ``__consumer_offsets`` (so it survives restarts), before the deletion is acknowledged."""
        removed = 0
        for group_id in list(self._actors):
            result = await self.call(group_id, "topic_deleted", {"topic": topic})
            if result["error_code"] != ErrorCode.NONE:
                # The next start finishes the removal (``_drop_offsets_of_deleted_topics``).
                log.error("group %s: removing offsets of deleted topic %s failed: %s",
                          group_id, topic, ErrorCode(result["error_code"]).name)
            removed += result["removed"]
        if removed:
            log.info("removed %d committed offset(s) of deleted topic %s", removed, topic)

    # -- actors ----------------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load ``__consumer_offsets``, start an actor per loaded group, then serve until cancelled."""
        loaded = self._load()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for group_id, (stored, offsets) in loaded.items():
                actor = self._spawn(group_id)
                actor.load(stored, offsets)
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

    async def call(self, group_id: str, kind: str, args: dict[str, Any]) -> dict[str, Any]:
        """Send one request to the group's actor and wait for its answer (held ones included)."""
        if kind in WRITING_REQUESTS:
            try:
                await self._ensure_offsets_topic()
            except Exception:  # noqa: BLE001 - the actor answers COORDINATOR_NOT_AVAILABLE for the missing topic
                log.exception("creating %s failed", OFFSETS_TOPIC)
        while True:
            actor = self._actors.get(group_id) or self._spawn(group_id)
            send, receive = trio.open_memory_channel[dict[str, Any]](1)
            try:
                await actor.send.send((kind, args, send))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                continue  # the actor ended (group deleted) just now: a fresh one answers
            with receive:
                try:
                    return await receive.receive()
                except trio.EndOfChannel:
                    continue

    def group_ids(self) -> list[str]:
        return list(self._actors)
