"""The leader's ISR changes, written to the partition's state node as Kafka's ZooKeeper-mode leaders did.

A leader adds a follower that has caught up and removes one that has fallen behind for longer
than ``replica.lag.time.max.ms``.  Each change is a conditional write of
``/brokers/topics/<t>/partitions/<p>/state`` on the version this broker's cache last read, with
the leader and its epoch unchanged: if the controller or a newer leader wrote the state meanwhile,
the write loses and this leader learns the newer state from the cache (and stops leading if it was
replaced).  Until the change is read back, the partition counts the union of the old and new ISR
for its high watermark (Kafka's maximal ISR).
"""

from __future__ import annotations

import logging

from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.partition_state_writes import write_state
from pykafkad.metadata.store import BadVersionError, NoNodeError, StoreError
from pykafkad.metadata.znodes import PartitionState
from pykafkad.replica.partition import Partition

log = logging.getLogger(__name__)


class IsrWriter:
    def __init__(self, metadata: ClusterMetadata, node_id: int) -> None:
        self.metadata = metadata
        self.node_id = node_id

    async def propose(self, partition: Partition, isr: list[int], reason: str) -> None:
        topic = self.metadata.topics.get(partition.topic)
        if topic is None or partition.index >= len(topic.partitions):
            return
        state = topic.partitions[partition.index]
        if (state.leader, state.leader_epoch) != (self.node_id, partition.leader_epoch) or partition.pending_isr:
            return
        partition.pending_isr = isr
        new = PartitionState(self.node_id, partition.leader_epoch, isr, state.controller_epoch)
        try:
            await write_state(self.metadata.store, partition.topic, partition.index, new, state.state_version)
        except (BadVersionError, NoNodeError, StoreError) as e:
            if partition.pending_isr is isr:
                partition.pending_isr = None
            log.info("ISR change of %s-%d to %s not written (%s): the partition's state changed meanwhile",
                     partition.topic, partition.index, isr, type(e).__name__)
            return
        log.info("ISR of %s-%d: %s -> %s (%s)", partition.topic, partition.index, state.isr, isr, reason)
