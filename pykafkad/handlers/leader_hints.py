"""KIP-951 leader hints: a Produce (v10+) or Fetch (v16+) answer that a partition moved names its
current leader and epoch and that broker's endpoint, so the client goes there without first
asking for metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

# The errors that mean "the leader is elsewhere" for each API (Kafka fills the hint for these).
PRODUCE_HINTED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER})
FETCH_HINTED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH})


class LeaderHints:
    """Collects the leaders named in one response, for its ``node_endpoints``."""

    def __init__(self, broker: Broker, hinted: frozenset[ErrorCode], listener: str = "PLAINTEXT") -> None:
        self.listener = listener
        self.broker = broker
        self.hinted = hinted
        self.leaders: set[int] = set()

    def current_leader(self, topic: str, index: int, error: int) -> dict[str, Any] | None:
        """The partition's leader and epoch as this broker knows them, when ``error`` calls for it."""
        if error not in self.hinted:
            return None
        info = self.broker.metadata.topics.get(topic)
        if info is None or not 0 <= index < len(info.partitions):
            return None
        partition = info.partitions[index]
        if partition.leader not in self.broker.metadata.brokers:
            return None
        self.leaders.add(partition.leader)
        return {"leader_id": partition.leader, "leader_epoch": partition.leader_epoch}

    def node_endpoints(self) -> list[dict[str, Any]]:
        if not self.leaders:
            return []
        brokers = self.broker.metadata.brokers
        found = [(b, b.endpoint(self.listener)) for b in (brokers[n] for n in sorted(self.leaders) if n in brokers)]
        return [{"node_id": b.node_id, "host": e[0], "port": e[1], "rack": b.rack} for b, e in found if e is not None]
