"""Leader elections asked for rather than forced by a failure: ElectLeaders (preferred or unclean,
``kafka-leader-election.sh``) and the controller's automatic preferred-leader rebalance
(``auto.leader.rebalance.enable``).

Each election is a conditional write of the partition's state node on the version the cache last
read, so it cannot undo a newer change; the answer waits (``timeout_ms``) until this broker's
cache shows the new leader.  The error codes are Kafka's: ELECTION_NOT_NEEDED when the wanted
leader leads already, PREFERRED_LEADER_NOT_AVAILABLE when the preferred replica is down or out
of sync, ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is alive, UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from pykafkad.controller.partition_leadership import preferred_leader_state, unclean_leader_state
from pykafkad.metadata.partition_state_writes import write_state
from pykafkad.metadata.store import BadVersionError, NoNodeError, StoreError
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.controller.election import ControllerElection
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.metadata.model import PartitionInfo
    from pykafkad.metadata.znodes import PartitionState

log = logging.getLogger(__name__)

PREFERRED = 0
UNCLEAN = 1
# A conditional write that lost to a concurrent change is tried again on the newer state.
WRITE_ATTEMPTS = 3
# Kafka's controller checks the balance this long after it takes over, then every interval.
FIRST_REBALANCE_CHECK_S = 5.0

TopicPartition = tuple[str, int]
Outcome = tuple[ErrorCode, str | None]


class LeaderElections:
    """Elections on request, from any broker; the automatic rebalance while this broker is controller."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, election: ControllerElection) -> None:
        self.config = config
        self.metadata = metadata
        self.election = election

    def _partition(self, tp: TopicPartition) -> PartitionInfo | None:
        topic = self.metadata.topics.get(tp[0])
        if topic is None or not 0 <= tp[1] < len(topic.partitions):
            return None
        return topic.partitions[tp[1]]

    def _decide(self, election_type: int, tp: TopicPartition) -> PartitionState | Outcome:
        partition = self._partition(tp)
        if partition is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."
        live = set(self.metadata.brokers)
        epoch = self.metadata.controller_epoch
        if election_type == PREFERRED:
            if partition.replicas and partition.leader == partition.replicas[0]:
                return ErrorCode.ELECTION_NOT_NEEDED, None
            state = preferred_leader_state(partition, live, epoch)
            if state is None:
                return (ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                        f"Failed to elect leader for partition {tp[0]}-{tp[1]}: the preferred replica "
                        f"{partition.replicas[0] if partition.replicas else -1} is not alive and in sync")
            return state
        if partition.leader in live:
            return ErrorCode.ELECTION_NOT_NEEDED, None
        state = unclean_leader_state(partition, live, epoch)
        if state is None:
            return (ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                    f"Failed to elect leader for partition {tp[0]}-{tp[1]}: no replica is alive")
        return state

    async def _write(self, election_type: int, tp: TopicPartition) -> PartitionState | Outcome:
        for _ in range(WRITE_ATTEMPTS):
            decided = self._decide(election_type, tp)
            if isinstance(decided, tuple):
                return decided
            partition = self._partition(tp)
            assert partition is not None
            try:
                await write_state(self.metadata.store, tp[0], tp[1], decided, partition.state_version)
            except (BadVersionError, NoNodeError):
                await self.metadata.settled()
                continue
            except StoreError as e:
                return ErrorCode.UNKNOWN_SERVER_ERROR, f"Writing the partition state failed: {e}"
            log.info("%s election of %s-%d: leader %d, epoch %d, isr %s (was leader %d)",
                     "preferred" if election_type == PREFERRED else "unclean", tp[0], tp[1], decided.leader,
                     decided.leader_epoch, decided.isr, partition.leader)
            return decided
        return ErrorCode.NOT_CONTROLLER, f"The state of {tp[0]}-{tp[1]} kept changing; try again"

    async def elect(self, election_type: int, partitions: list[TopicPartition] | None,
                    timeout_ms: int) -> dict[TopicPartition, Outcome]:
        """Run the elections; every partition's outcome.  With ``partitions`` None every partition is
        tried and, as Kafka answers, those that needed no election are left out."""
        wanted = partitions if partitions is not None else [
            (t.name, p.index) for t in self.metadata.topics.values() for p in t.partitions]
        outcomes: dict[TopicPartition, Outcome] = {}
        written: dict[TopicPartition, PartitionState] = {}
        for tp in dict.fromkeys(wanted):
            decided = await self._write(election_type, tp)
            if isinstance(decided, tuple):
                outcomes[tp] = decided
            else:
                written[tp] = decided

        def shown(tp: TopicPartition) -> bool:
            p = self._partition(tp)
            return p is not None and p.leader_epoch >= written[tp].leader_epoch

        with trio.move_on_after(max(timeout_ms, 0) / 1000):
            await self.metadata.wait_for(lambda: all(shown(tp) for tp in written))
        for tp in written:
            outcomes[tp] = (ErrorCode.NONE, None) if shown(tp) else \
                (ErrorCode.REQUEST_TIMED_OUT, "The election was written but not seen within the timeout")
        if partitions is None:
            outcomes = {tp: o for tp, o in outcomes.items() if o[0] != ErrorCode.ELECTION_NOT_NEEDED}
        return outcomes

    # -- auto.leader.rebalance.enable ------------------------------------------------------------

    def imbalanced(self) -> list[TopicPartition]:
        """Partitions to hand back to their preferred leader: for each live broker whose share of the
        partitions it prefers but does not lead is above ``leader.imbalance.per.broker.percentage``,
        those of them it can lead now."""
        live = set(self.metadata.brokers)
        threshold = self.config["leader.imbalance.per.broker.percentage"] / 100
        preferring: dict[int, list[PartitionInfo]] = {}
        names: dict[int, str] = {}
        for topic in self.metadata.topics.values():
            for p in topic.partitions:
                if p.replicas:
                    preferring.setdefault(p.replicas[0], []).append(p)
                    names[id(p)] = topic.name
        out: list[TopicPartition] = []
        for broker, partitions in sorted(preferring.items()):
            if broker not in live:
                continue
            not_led = [p for p in partitions if p.leader != broker]
            if len(not_led) / len(partitions) > threshold:
                out += [(names[id(p)], p.index) for p in not_led if broker in p.isr]
        return out

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """While this broker is controller, check the leader balance FIRST_REBALANCE_CHECK_S after taking
        over and every ``leader.imbalance.check.interval.seconds`` after."""
        task_status.started()
        if not self.config["auto.leader.rebalance.enable"]:
            return
        interval_s = self.config["leader.imbalance.check.interval.seconds"]
        while True:
            await self.metadata.wait_for(lambda: self.election.is_controller)
            epoch = self.election.epoch
            await trio.sleep(min(FIRST_REBALANCE_CHECK_S, interval_s))
            while self.election.is_controller and self.election.epoch == epoch:
                candidates = self.imbalanced()
                if candidates:
                    log.info("leader imbalance: moving %d partition(s) back to their preferred leader",
                             len(candidates))
                    await self.elect(PREFERRED, candidates, int(interval_s * 1000))
                await trio.sleep(interval_s)
