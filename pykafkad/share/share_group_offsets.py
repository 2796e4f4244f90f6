"""A share group's offsets as the admin APIs see and change them (Kafka's
GroupCoordinatorService.{describe,alter,delete}ShareGroupOffsets).

- Describe: per share-partition, its start offset and the leader epoch of its state, from the share
  coordinator (ReadShareGroupStateSummary), and its lag: the records below the partition's high
  watermark not yet delivered for good, ``high watermark - start offset - records past the start
  already done``.  The high watermark is the leader's, asked with ListOffsets when another broker
  leads the partition.
- Alter (``kafka-share-groups.sh --reset-offsets``): an empty share group's share-partitions start
  again at the given offsets, with nothing in flight; their state is initialized anew under a higher
  state epoch, which fences a leader still holding the old state, and they count as initialized.
- Delete (``--delete-offsets``, and DeleteGroups of a share group): an empty share group's state for
  whole topics is deleted, so a member subscribing again starts them where
  ``share.auto.offset.reset`` says.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.requests import NewShareGroup, ShareGroupPartitions, ShareStateChanged
from pykafkad.coordinator.share.share_state_records import NOT_SET, ShareState
from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLinkError, BrokerLinkPool
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.coordinator.group.coordinator import GroupCoordinator
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.replica.replica_manager import ReplicaManager
    from pykafkad.share.share_persister import SharePersister

log = logging.getLogger(__name__)

LIST_OFFSETS, LIST_OFFSETS_VERSION = 2, 7
LATEST = -1
REQUEST_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ShareOffset:
    """One share-partition's line of DescribeShareGroupOffsets."""

    start_offset: int = NOT_SET
    leader_epoch: int = NOT_SET
    lag: int = NOT_SET
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True)
class EmptyShareGroup:
    """An empty share group's epoch and the partitions it has share state for, or why it is not one."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    group_epoch: int = -1
    initialized: dict[uuid.UUID, list[int]] = field(default_factory=dict)
    # GROUP_ID_NOT_FOUND because there is no group of that name at all (not one of another type).
    no_group: bool = False


class ShareGroupOffsets:
    """Reads and changes share groups' offsets for the admin APIs (90-92) and DeleteGroups."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 persister: SharePersister, groups: GroupCoordinator) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.persister = persister
        self.groups = groups
        self._links = BrokerLinkPool(f"share-offsets-{config.node_id}", ssl_context=inter_broker_context(config),
                                     sasl=inter_broker_sasl(config))

    async def describe(self, group: str, topic: str, index: int) -> ShareOffset:
        info = self.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            return ShareOffset()
        found = await self.persister.read_summary((group, info.topic_id, index))
        if not isinstance(found, ShareState):
            return ShareOffset(error=ErrorCode(found[0]), message=found[1])
        if found.start_offset < 0:
            return ShareOffset()
        lag = NOT_SET
        if found.delivery_complete_count >= 0:
            high_watermark = await self._high_watermark(topic, index)
            if high_watermark >= 0:
                lag = max(0, high_watermark - found.start_offset - found.delivery_complete_count)
        return ShareOffset(found.start_offset, found.leader_epoch, lag)

    async def of_group(self, group_id: str) -> list[tuple[str, int, ShareOffset]]:
        """Every share-partition the group has state for, as (topic, partition, its offsets), for the
        console; none when ``group_id`` is no share group here."""
        known = await self.groups.call(group_id, ShareGroupPartitions())
        if known["error_code"] != ErrorCode.NONE:
            return []
        names = {info.topic_id: name for name, info in self.metadata.topics.items()}
        return [(names[t], index, await self.describe(group_id, names[t], index))
                for t, indexes in sorted(known["initialized"].items(), key=lambda i: names.get(i[0], ""))
                if t in names for index in indexes]

    async def _high_watermark(self, topic: str, index: int) -> int:
        """The partition's high watermark, from its leader (-1 when it cannot be had)."""
        partition = self.replicas.get(topic, index)
        if partition is not None and partition.is_leader:
            return partition.high_watermark
        info = self.metadata.topics.get(topic)
        leader = info.partitions[index].leader if info is not None else -1
        broker = self.metadata.brokers.get(leader)
        if broker is None:
            return -1
        body = {"replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
            {"partition_index": index, "current_leader_epoch": -1, "timestamp": LATEST}]}]}
        try:
            answer = await self._links.request(broker.host, broker.port, LIST_OFFSETS, LIST_OFFSETS_VERSION, body,
                                               REQUEST_TIMEOUT_S)
        except BrokerLinkError as e:
            log.info("the high watermark of %s-%d from broker %d: %s", topic, index, leader, e)
            return -1
        found = answer["topics"][0]["partitions"][0]
        return found["offset"] if found["error_code"] == ErrorCode.NONE else -1

    # -- AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups -------------------------------

    async def empty_group(self, group_id: str, create: bool = False) -> EmptyShareGroup:
        """The share group, if it has no members: GROUP_ID_NOT_FOUND when there is no share group of
        that name (with ``create``, only when the name is another type's), NON_EMPTY_GROUP while it
        has members (Kafka's ShareGroup.validateEmptyGroup)."""
        known = await self.groups.call(group_id, NewShareGroup() if create else ShareGroupPartitions())
        if known["error_code"] != ErrorCode.NONE:
            return EmptyShareGroup(ErrorCode(known["error_code"]), known["error_message"],
                                   no_group=known.get("no_group", False))
        if not known["empty"]:
            return EmptyShareGroup(ErrorCode.NON_EMPTY_GROUP, f"Share group {group_id} is not empty.")
        return EmptyShareGroup(group_epoch=known["group_epoch"], initialized=known["initialized"])

    async def alter(self, group_id: str, topic_id: uuid.UUID, index: int, start_offset: int,
                    group_epoch: int) -> tuple[ErrorCode, str | None]:
        """One share-partition of an empty group starts again at ``start_offset``: its state is
        initialized under a state epoch above the one it had (Kafka uses the group epoch)."""
        key = (group_id, topic_id, index)
        found = await self.persister.read_summary(key)
        if not isinstance(found, ShareState):
            return ErrorCode(found[0]), found[1]
        state_epoch = max(group_epoch, found.state_epoch + 1 if found.start_offset != NOT_SET else 0)
        code, message = await self.persister.initialize(key, state_epoch, start_offset)
        return ErrorCode(code), message

    async def delete_states(self, group_id: str, partitions: dict[uuid.UUID, list[int]]) -> dict[uuid.UUID, Any]:
        """Delete the share state of these partitions; per topic, the first error (NONE if none)."""
        errors: dict[uuid.UUID, Any] = {}
        for topic_id, indexes in partitions.items():
            errors[topic_id] = (ErrorCode.NONE, None)
            for index in indexes:
                code, message = await self.persister.delete((group_id, topic_id, index))
                if code != ErrorCode.NONE:
                    log.warning("the share state of group %s on %s-%d was not deleted: %s", group_id, topic_id,
                                index, ErrorCode(code).name)
                    errors[topic_id] = (ErrorCode(code), message)
                    break
        return errors

    async def changed(self, group_id: str, initialized: dict[uuid.UUID, list[int]] | None = None,
                      deleted: dict[uuid.UUID, list[int]] | None = None) -> tuple[ErrorCode, str | None]:
        """Tell the group's coordinator which partitions now have share state, or no longer do."""
        answer = await self.groups.call(group_id, ShareStateChanged(
            {t: frozenset(ps) for t, ps in (initialized or {}).items() if ps},
            {t: frozenset(ps) for t, ps in (deleted or {}).items() if ps}))
        return ErrorCode(answer["error_code"]), answer["error_message"]

    async def delete_group_state(self, group_id: str) -> ErrorCode | None:
        """Before DeleteGroups removes an empty share group, its share state goes (Kafka's
        sharePartitionDeleteRequests); None when the group is not a share group, so the delete goes
        on as for any group, and the error that stops the delete otherwise."""
        group = await self.empty_group(group_id)
        if group.error == ErrorCode.GROUP_ID_NOT_FOUND:
            return None
        if group.error != ErrorCode.NONE:
            return group.error
        errors = await self.delete_states(group_id, group.initialized)
        failed = [code for code, _ in errors.values() if code != ErrorCode.NONE]
        return failed[0] if failed else ErrorCode.NONE
