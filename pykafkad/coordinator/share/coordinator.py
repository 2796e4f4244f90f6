"""The share coordinator (KIP-932): the persisted delivery state of share-partitions, kept in
``__share_group_state`` on the leaders of its partitions, as Kafka's ShareCoordinatorService does.

A share-partition's state (its start offset, and the state and delivery count of the in-flight
records past it) lives on the partition of ``__share_group_state`` that its key
``group:topicId:partition`` hashes to.  The partition leader of the share-partition reads the state
when it starts serving it, and writes it after every acknowledgement, release and lock expiry;
each write is answered once it is replicated (acks=all), so an acknowledgement survives the loss of
any broker.  Writes and reads carry the leader epoch of the share-partition's leader: a write from a
leader older than the one that last read or wrote is refused (FENCED_LEADER_EPOCH).

Every write here is a ShareSnapshot of the merged state (Kafka writes ShareUpdate deltas between
snapshots, and replays both; so does ``share_state_records.replay``).  The topic is not compacted:
every ``share.coordinator.state.topic.prune.interval.ms`` the records below the oldest one still
holding a share-partition's latest state are deleted.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import trio

from pykafkad._rust_log import LogError
from pykafkad.coordinator.coordinator_partitions import CoordinatorPartitions
from pykafkad.coordinator.group.coordinator import coordinator_error
from pykafkad.coordinator.internal_topic_log import encode_batch, read_partition
from pykafkad.coordinator.share.share_state_records import (
    NOT_SET,
    SHARE_STATE_TOPIC,
    SNAPSHOT,
    ShareKey,
    ShareState,
    ShareStateRecordError,
    StateBatch,
    apply,
    coordinator_key,
    decode_key,
    decode_value,
    encode_key,
    encode_snapshot,
    merge_batches,
)
from pykafkad.errors import KafkaError
from pykafkad.java_hash import java_string_hash
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog
    from pykafkad.config import BrokerConfig
    from pykafkad.controller.controller import Controller
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.replica.partition import Partition
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

SHARE_STATE_TOPIC_CONFIGS = {"cleanup.policy": "delete", "retention.ms": "-1", "compression.type": "producer"}
WRITE_TIMEOUT_S = 5.0  # Kafka's share.coordinator.write.timeout.ms

Outcome = tuple[ErrorCode, str | None]


def partition_for(key: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(key.hashCode) % partitions`` (abs(MIN_VALUE) is 0)."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def read_states(plog: PartitionLog) -> tuple[dict[ShareKey, ShareState | None], dict[ShareKey, int]]:
    """A partition replayed: each share-partition's state, and the offset of the record holding it."""
    states: dict[ShareKey, ShareState | None] = {}
    offsets: dict[ShareKey, int] = {}
    for record in read_partition(plog):
        if record.key is None:
            continue
        try:
            kind, key = decode_key(record.key)
            body = None if record.value is None else decode_value(kind, record.value)
        except ShareStateRecordError as e:
            log.error("skipping a %s record that does not decode: %s", SHARE_STATE_TOPIC, e)
            continue
        states[key] = apply(states.get(key), kind, body)
        offsets[key] = record.offset
    return states, offsets


class ShareCoordinator:
    """This broker's share coordinator, for the share-partitions whose state partitions it leads."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 controller: Controller) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.controller = controller
        self._states: dict[ShareKey, ShareState] = {}
        # Where each share-partition's latest record is (what pruning keeps).
        self._offsets: dict[ShareKey, int] = {}
        self.partitions = CoordinatorPartitions(SHARE_STATE_TOPIC, read_states, self._loaded, self._dropped)

    # -- the internal topic ------------------------------------------------------------------------

    @property
    def num_partitions(self) -> int:
        topic = self.metadata.topics.get(SHARE_STATE_TOPIC)
        if topic is not None:
            return len(topic.partitions)
        return self.config["share.coordinator.state.topic.num.partitions"]

    def partition_for(self, key: ShareKey) -> int:
        return partition_for(coordinator_key(*key), self.num_partitions)

    async def create_topic(self) -> None:
        """Create ``__share_group_state`` on first use, as Kafka does."""
        if self.metadata.topics.get(SHARE_STATE_TOPIC) is not None:
            return
        c = self.config
        configs: dict[str, str | None] = {
            **SHARE_STATE_TOPIC_CONFIGS, "min.insync.replicas": str(c["share.coordinator.state.topic.min.isr"]),
            "segment.bytes": str(c["share.coordinator.state.topic.segment.bytes"])}
        try:
            await self.controller.create_topic(SHARE_STATE_TOPIC, c["share.coordinator.state.topic.num.partitions"],
                                               c["share.coordinator.state.topic.replication.factor"], configs,
                                               internal=True)
        except KafkaError as e:
            if e.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                raise

    # -- leadership ----------------------------------------------------------------------------------

    def on_leadership(self, partition: Partition, leads: bool) -> None:
        self.partitions.on_leadership(partition, leads)

    def _loaded(self, partition: Partition, read: tuple[dict[ShareKey, ShareState | None], dict[ShareKey, int]],
                _epoch: int) -> None:
        states, offsets = read
        for key, state in states.items():
            if state is None:
                self._states.pop(key, None)
                self._offsets.pop(key, None)
            else:
                self._states[key] = state
                self._offsets[key] = offsets[key]
        if states:
            log.info("loaded the state of %d share-partition(s) from %s-%d", len(self._states), SHARE_STATE_TOPIC,
                     partition.index)

    def _dropped(self, index: int) -> None:
        for key in [k for k in self._states if self.partition_for(k) == index]:
            del self._states[key]
            self._offsets.pop(key, None)

    async def _check(self, key: ShareKey) -> ErrorCode | None:
        if SHARE_STATE_TOPIC not in self.metadata.topics:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return await self.partitions.check(self.partition_for(key))

    # -- writing -----------------------------------------------------------------------------------

    async def _write(self, key: ShareKey, state: ShareState | None) -> ErrorCode:
        """Append ``state`` (None: the key's deletion) and wait until it is replicated; then it is the
        key's state.  Kafka's error mapping for a coordinator's write."""
        index = self.partition_for(key)
        epoch = self.partitions.epoch(index)
        partition = self.replicas.get(SHARE_STATE_TOPIC, index)
        if epoch is None or partition is None:
            return ErrorCode.NOT_COORDINATOR
        min_isr = self.replicas.min_insync_replicas(partition)
        now = int(time.time() * 1000)
        try:
            record = None if state is None else encode_snapshot(state)
            info = partition.append_as_leader(encode_batch([(encode_key(SNAPSHOT, key), record)], now), now, min_isr)
            code = await partition.wait_for_acks(info.last_offset + 1, min_isr, WRITE_TIMEOUT_S)
        except KafkaError as e:
            code = ErrorCode(e.code)
        except LogError as e:
            log.error("writing the state of %s to %s-%d failed: %s", key, SHARE_STATE_TOPIC, index, e)
            code = ErrorCode(e.code)
        code = coordinator_error(code)
        if code == ErrorCode.NONE and self.partitions.epoch(index) != epoch:
            code = ErrorCode.NOT_COORDINATOR
        if code == ErrorCode.NONE:
            if state is None:
                self._states.pop(key, None)
                self._offsets.pop(key, None)
            else:
                self._states[key] = state
                self._offsets[key] = info.last_offset
        return code

    # -- the operations (InitializeShareGroupState ... ReadShareGroupStateSummary) -------------------

    def _topic_known(self, key: ShareKey) -> bool:
        topic = self.metadata.topics_by_id.get(key[1])
        return topic is not None and 0 <= key[2] < len(topic.partitions)

    async def initialize(self, key: ShareKey, state_epoch: int, start_offset: int) -> Outcome:
        if (code := await self._check(key)) is not None:
            return code, None
        if state_epoch < 0 or key[2] < 0:
            return ErrorCode.INVALID_REQUEST, "Invalid state epoch or partition."
        stored = self._states.get(key)
        if stored is not None and stored.state_epoch > state_epoch:
            return ErrorCode.FENCED_STATE_EPOCH, None
        if not self._topic_known(key):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        now = int(time.time() * 1000)
        state = ShareState(state_epoch, 0, start_offset, (), 0 if stored is None else stored.snapshot_epoch + 1,
                           NOT_SET if start_offset == NOT_SET else 0, now, now)
        return await self._write(key, state), None

    async def read(self, key: ShareKey, leader_epoch: int) -> ShareState | Outcome:
        """The state for a leader starting to serve the share-partition; a newer leader epoch is
        written, fencing the older leader's writes."""
        if (code := await self._check(key)) is not None:
            return code, None
        stored = self._states.get(key)
        if stored is None:
            return ErrorCode.INVALID_REQUEST, "read uninitialized share partition"
        if stored.leader_epoch > leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH, None
        if leader_epoch != stored.leader_epoch:
            fenced = ShareState(stored.state_epoch, leader_epoch, stored.start_offset, stored.batches,
                                stored.snapshot_epoch + 1, stored.delivery_complete_count, stored.create_timestamp,
                                int(time.time() * 1000))
            if (code := await self._write(key, fenced)) != ErrorCode.NONE:
                return code, None
            stored = fenced
        return stored

    async def write(self, key: ShareKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch], delivery_complete_count: int = NOT_SET) -> Outcome:
        if (code := await self._check(key)) is not None:
            return code, None
        if leader_epoch < 0 or state_epoch < 0:
            return ErrorCode.INVALID_REQUEST, "Invalid leader or state epoch."
        stored = self._states.get(key)
        if stored is None:
            return ErrorCode.INVALID_REQUEST, "write uninitialized share partition"
        if stored.leader_epoch > leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH, None
        if stored.state_epoch > state_epoch:
            return ErrorCode.FENCED_STATE_EPOCH, None
        if not self._topic_known(key):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        start = max(start_offset, stored.start_offset)
        state = ShareState(stored.state_epoch, leader_epoch, start, merge_batches(stored.batches, batches, start),
                           stored.snapshot_epoch + 1, delivery_complete_count, stored.create_timestamp,
                           int(time.time() * 1000))
        return await self._write(key, state), None

    async def delete(self, key: ShareKey) -> Outcome:
        if (code := await self._check(key)) is not None:
            return code, None
        if key not in self._states:
            return ErrorCode.NONE, None
        return await self._write(key, None), None

    async def read_summary(self, key: ShareKey) -> ShareState | Outcome:
        if (code := await self._check(key)) is not None:
            return code, None
        stored = self._states.get(key)
        if stored is None:
            return ShareState(0, 0, NOT_SET)
        return stored

    def states(self) -> dict[ShareKey, ShareState]:
        return dict(self._states)

    # -- pruning -----------------------------------------------------------------------------------

    def _prune(self) -> None:
        """Delete each led partition's records below the oldest one still holding a latest state."""
        topic = self.metadata.topics.get(SHARE_STATE_TOPIC)
        if topic is None:
            return
        lowest: dict[int, int] = {}
        for key, offset in self._offsets.items():
            index = self.partition_for(key)
            lowest[index] = min(lowest.get(index, offset), offset)
        for index in range(len(topic.partitions)):
            partition = self.replicas.get(SHARE_STATE_TOPIC, index)
            if partition is None or not self.partitions.owns(index):
                continue
            keep = lowest.get(index, partition.high_watermark)
            if keep > partition.log.log_start_offset:
                try:
                    partition.delete_records(min(keep, partition.high_watermark))
                except (KafkaError, LogError) as e:
                    log.warning("pruning %s-%d failed: %s", SHARE_STATE_TOPIC, index, e)

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load the partitions this broker leads, then follow leadership and prune until cancelled."""
        interval_s = self.config["share.coordinator.state.topic.prune.interval.ms"] / 1000
        async with trio.open_nursery() as nursery:
            await self.partitions.load_led(nursery, self.replicas)
            task_status.started()
            while True:
                await trio.sleep(interval_s)
                self._prune()

