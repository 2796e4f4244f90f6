"""The records of the cluster model: brokers, topics and their partitions, as this broker last saw them.

``ClusterMetadata`` builds them from the metadata store's nodes and keeps them current; handlers
and layers read them.  A record is updated in place when its nodes change, so a layer holding a
``TopicInfo`` sees new partitions, states and configs without asking again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
# A partition state's leader while none is elected or alive.
NO_LEADER = -1


@dataclass
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class PartitionInfo:
    """A partition's assignment and its state (``/brokers/topics/<t>/partitions/<p>/state``).

    ``leader`` is -1 while the controller has not elected one (or none is alive); ``state_version``
    is the state node's version, which an ISR change must name to win (-1 while there is no node).
    """

    index: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    controller_epoch: int = 0
    state_version: int = -1


@dataclass
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionInfo]
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False
