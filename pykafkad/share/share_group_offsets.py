"""A share group's offsets as DescribeShareGroupOffsets reports them (Kafka's
GroupCoordinatorService.describeShareGroupOffsets): per share-partition, its start offset and the
leader epoch of its state, from the share coordinator (ReadShareGroupStateSummary), and its lag:
the records below the partition's high watermark not yet delivered for good,
``high watermark - start offset - records past the start already done``.  The high watermark is the
leader's, asked with ListOffsets when another broker leads the partition.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pykafkad.coordinator.share.share_state_records import NOT_SET, ShareState
from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLinkError, BrokerLinkPool
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
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


class ShareGroupOffsets:
    """Reads share groups' offsets for DescribeShareGroupOffsets."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 persister: SharePersister) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.persister = persister
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
