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
    """A registered broker.  ``host``/``port`` is its endpoint on the inter-broker listener (where
    other brokers reach it); ``endpoints`` holds every listener's, by name, for clients."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Listener name -> security protocol, as the broker registered them.
    protocols: dict[str, str] = field(default_factory=dict)

    def endpoint(self, listener: str) -> tuple[str, int] | None:
        """The broker's address on ``listener``; its only address for a broker that registered none
        by name; None when it has no such listener."""
        if not self.endpoints:
            return self.host, self.port
        return self.endpoints.get(listener)


@dataclass
class PartitionInfo:
    """A partition's assignment and its state (``/brokers/topics/<t>/partitions/<p>/state``).

    ``leader`` is -1 while the controller has not elected one (or none is alive); ``state_version``
    is the state node's version, which an ISR change must name to win (-1 while there is no node).
    While the partition is being reassigned, ``replicas`` is the full set (the target replicas,
    then the old ones leaving), and ``adding_replicas`` / ``removing_replicas`` say which is which.
    """

    index: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    controller_epoch: int = 0
    state_version: int = -1
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)

    @property
    def reassigning(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def target_replicas(self) -> list[int]:
        """The replicas the partition will have once its reassignment completes."""
        return [r for r in self.replicas if r not in self.removing_replicas]

    @property
    def original_replicas(self) -> list[int]:
        """The replicas the partition had before its reassignment (what a cancellation restores)."""
        return [r for r in self.replicas if r not in self.adding_replicas]


@dataclass
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionInfo]
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False
