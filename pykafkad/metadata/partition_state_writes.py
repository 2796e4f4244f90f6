"""Writing partition states so that every broker's cache hears of them.

A broker's cache does not watch each partition's state node: that cost every broker one ZooKeeper
read per partition, 2,000 reads each for a topic of 2,000 partitions.  It watches one node per
topic instead, the topic's ``partitions`` node (empty in Kafka's layout).  So every write of a
state node writes that node too, in the same commit, with the states it wrote and their new node
versions (``znodes.encode_state_notice``).  Its version counts the writes: a cache that has seen
the version before takes the states from it, with no read more than a watch on each state node
cost; one that missed a write (two writes merged into one watch event, a lost session) reads
every state of the topic.

Creating a topic or its new partitions writes no notice: a cache reads a partition's first state
when it reads the assignment that adds it.  A topic too large for one request is created in
several commits and then given an empty notice, which makes every cache read all its states
(``controller/topic_node_writes.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pykafkad.metadata import znodes
from pykafkad.metadata.store import MetadataStore, Op, SetData
from pykafkad.metadata.znodes import PartitionState


def state_writes(topic: str, states: Mapping[int, tuple[PartitionState, int]]) -> list[Op]:
    """The ops that write ``states`` (index -> (new state, the version it replaces)) of ``topic``,
    each conditional on its version, and announce them."""
    ops: list[Op] = [SetData(znodes.partition_state_path(topic, index), znodes.encode_partition_state(state), version)
                     for index, (state, version) in states.items()]
    if ops:
        ops.append(SetData(znodes.partitions_path(topic), znodes.encode_state_notice(dict(states))))
    return ops


async def write_state(store: MetadataStore, topic: str, index: int, state: PartitionState, version: int) -> None:
    """Write one partition's state if its node is at ``version``; raises BadVersionError if another
    writer came first, NoNodeError if the partition is gone."""
    await store.commit(state_writes(topic, {index: (state, version)}))
