"""Partition reassignment (KIP-455): moving a partition's replicas to other brokers while it serves.

A reassignment is kept where Kafka's ZooKeeper-mode controller kept it, in the topic's
``/brokers/topics/<t>`` node: the partition's replicas become the full set (the target replicas,
then the old ones that are leaving), with ``adding_replicas`` and ``removing_replicas`` saying
which is which.  Every broker reads that from its cache: a broker that gains a replica creates
its log and follows the leader, and the leader counts it once it fetches.  Nothing else about the
reassignment lives in memory, so a controller that dies in the middle leaves it to the next one.

While this broker is the controller, a partition whose target replicas have all joined the ISR is
completed in one all-or-none write of its two nodes: its state (a leader from the target replicas,
the leaving ones out of the ISR, a new leader epoch) and its assignment (the target replicas, no
adding or removing).  The brokers left out stop their replicas and delete them.

A cancellation (a request with no replicas) puts the original replicas back the same way at once:
the replicas being added leave, and the partition is led by an original replica in sync.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from pykafkad.controller.replica_placement import manual_assignment_problem
from pykafkad.metadata import znodes
from pykafkad.metadata.model import NO_LEADER
from pykafkad.metadata.partition_state_writes import state_writes
from pykafkad.metadata.store import BadVersionError, NoNodeError, SetData, StoreError
from pykafkad.metadata.znodes import PartitionState
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.controller.election import ControllerElection
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.metadata.model import PartitionInfo, TopicInfo

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
Outcome = tuple[ErrorCode, str | None]
# A conditional write that lost to a concurrent change of the topic is tried again on the newer node.
WRITE_ATTEMPTS = 5


@dataclass(frozen=True)
class PartitionReplicas:
    """A partition's entry in its topic's assignment: all its replicas, and those being added and removed."""

    replicas: list[int]
    adding: list[int]
    removing: list[int]

    def write_to(self, assignment: znodes.Assignment, index: int) -> None:
        assignment.replicas[index] = self.replicas
        for reassigning, replicas in ((assignment.adding, self.adding), (assignment.removing, self.removing)):
            if replicas:
                reassigning[index] = replicas
            else:
                reassigning.pop(index, None)


@dataclass(frozen=True)
class OngoingReassignment:
    """A partition being reassigned, as ListPartitionReassignments reports it."""

    topic: str
    partition: int
    replicas: list[int]
    adding: list[int]
    removing: list[int]


class PartitionReassignments:
    """Reassignments asked for (from any broker) and completed (by the controller)."""

    def __init__(self, metadata: ClusterMetadata, election: ControllerElection) -> None:
        self.metadata = metadata
        self.store = metadata.store
        self.election = election

    # -- AlterPartitionReassignments -----------------------------------------------------------------

    async def alter(self, wanted: dict[TopicPartition, list[int] | None],
                    allow_replication_factor_change: bool = True) -> dict[TopicPartition, Outcome]:
        """Start (replicas) or cancel (None) the reassignment of each partition; each one's outcome.
        The partitions of one topic are written together."""
        outcomes: dict[TopicPartition, Outcome] = {}
        by_topic: dict[str, dict[int, list[int] | None]] = {}
        for (topic, index), replicas in wanted.items():
            by_topic.setdefault(topic, {})[index] = replicas
        for topic, partitions in by_topic.items():
            for index, outcome in (await self._alter_topic(topic, partitions, allow_replication_factor_change)).items():
                outcomes[(topic, index)] = outcome
        return outcomes

    async def _alter_topic(self, name: str, wanted: dict[int, list[int] | None],
                           allow_rf_change: bool) -> dict[int, Outcome]:
        for _ in range(WRITE_ATTEMPTS):
            topic = self.metadata.topics.get(name)
            outcomes: dict[int, Outcome] = {}
            node = await self.store.get(znodes.topic_path(name))
            if topic is None or node is None:
                return {i: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}.")
                        for i in wanted}
            assignment = znodes.decode_assignment(node.data)
            if assignment.topic_id is not None and assignment.topic_id != topic.topic_id:
                await self.metadata.settled()  # deleted and created again since the cache read it
                continue
            states: dict[int, tuple[PartitionState, int]] = {}
            changed: dict[int, PartitionState | None] = {}
            for index, target in wanted.items():
                if not 0 <= index < len(assignment.replicas) or index >= len(topic.partitions):
                    outcomes[index] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                       f"Unable to find partition {name}:{index}.")
                    continue
                partition = topic.partitions[index]
                current = PartitionReplicas(list(assignment.replicas[index]), assignment.adding.get(index, []),
                                            assignment.removing.get(index, []))
                planned = (self._cancel(current) if target is None
                           else self._start(current, target, allow_rf_change))
                if not isinstance(planned, PartitionReplicas):
                    outcomes[index] = planned
                    continue
                if planned == current:
                    outcomes[index] = (ErrorCode.NONE, None)  # already so: nothing to write
                    continue
                state = None
                if set(current.replicas) - set(planned.replicas):
                    # Replicas leave at once (a cancellation, or a new target dropping replicas an
                    # ongoing one was adding): they leave the ISR and the leadership too.
                    state = final_state(partition, planned.replicas, set(self.metadata.brokers),
                                        self.metadata.controller_epoch)
                    if state is None:
                        outcomes[index] = (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                           f"None of the replicas {planned.replicas} left to "
                                           f"{name}-{index} is in sync: it would have no leader.")
                        continue
                    states[index] = (state, partition.state_version)
                planned.write_to(assignment, index)
                changed[index] = state
            if not changed:
                return outcomes
            ops = [SetData(znodes.topic_path(name), znodes.encode(assignment), version=node.version),
                   *state_writes(name, states)]
            try:
                await self.store.commit(ops)
            except (BadVersionError, NoNodeError):
                await self.metadata.settled()
                continue
            except StoreError as e:
                return {**outcomes, **{i: (ErrorCode.UNKNOWN_SERVER_ERROR, f"Writing the reassignment failed: {e}")
                                       for i in changed}}
            for index, state in changed.items():
                replicas = assignment.replicas[index]
                if wanted[index] is None:
                    log.info("reassignment of %s-%d cancelled: replicas %s", name, index, replicas)
                else:
                    log.info("reassignment of %s-%d: replicas %s (adding %s, removing %s)", name, index, replicas,
                             assignment.adding.get(index, []), assignment.removing.get(index, []))
                if state is not None:
                    log.info("%s-%d: leader %d, epoch %d, isr %s", name, index, state.leader, state.leader_epoch,
                             state.isr)
                outcomes[index] = (ErrorCode.NONE, None)
            return outcomes
        return {i: (ErrorCode.UNKNOWN_SERVER_ERROR, f"The assignment of {name} kept changing; try again")
                for i in wanted}

    def _start(self, current: PartitionReplicas, target: list[int],
               allow_rf_change: bool) -> PartitionReplicas | Outcome:
        """The partition's replicas with ``target`` as its reassignment, or the error."""
        problem = manual_assignment_problem(target, self.metadata.brokers)
        if problem:
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem
        original = [r for r in current.replicas if r not in current.adding]
        # Measured, as Kafka does, against an ongoing reassignment's target if there is one.
        ongoing_target = [r for r in current.replicas if r not in current.removing]
        if not allow_rf_change and len(target) != len(ongoing_target):
            return (ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"The replication factor is changed from {len(ongoing_target)} to {len(target)}")
        # As Kafka's ZooKeeper-mode controller: a new target replaces an ongoing one, measured from
        # the original replicas.
        return PartitionReplicas(target + [r for r in original if r not in target],
                                 [r for r in target if r not in original], [r for r in original if r not in target])

    @staticmethod
    def _cancel(current: PartitionReplicas) -> PartitionReplicas | Outcome:
        """The partition's original replicas back, or the error."""
        if not current.adding and not current.removing:
            return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
        return PartitionReplicas([r for r in current.replicas if r not in current.adding], [], [])

    # -- ListPartitionReassignments --------------------------------------------------------------

    def ongoing(self, wanted: list[TopicPartition] | None = None) -> list[OngoingReassignment]:
        """The partitions being reassigned, of ``wanted`` (all when None)."""
        if wanted is None:
            candidates = [(t, p) for t in self.metadata.reassigning_topics() for p in t.partitions]
        else:
            candidates = []
            for name, index in wanted:
                topic = self.metadata.topics.get(name)
                if topic is not None and 0 <= index < len(topic.partitions):
                    candidates.append((topic, topic.partitions[index]))
        return [OngoingReassignment(t.name, p.index, list(p.replicas), list(p.adding_replicas),
                                    list(p.removing_replicas)) for t, p in candidates if p.reassigning]

    # -- completion, by the controller -----------------------------------------------------------

    def _complete(self) -> list[tuple[TopicInfo, PartitionInfo]]:
        return [(t, p) for t in self.metadata.reassigning_topics() for p in t.partitions
                if p.reassigning and p.state_version >= 0 and all(r in p.isr for r in p.target_replicas)]

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """While this broker is the controller, complete each reassignment whose target replicas are
        all in sync; woken by the cache's changes (an ISR expansion, a new reassignment)."""
        task_status.started()
        while True:
            await self.metadata.wait_for(lambda: self.election.is_controller and self._complete())
            progress = False
            for topic, partition in self._complete():
                try:
                    progress |= await self._finish(topic, partition)
                except StoreError as e:
                    log.warning("completing the reassignment of %s-%d: %s; trying again", topic.name,
                                partition.index, e)
            if not progress:
                # Lost to a concurrent write, or no target replica alive to lead: look again once the
                # cache has read what changed (at most twice a second).
                await self.metadata.settled()
                await trio.sleep(0.5)

    async def _finish(self, topic: TopicInfo, partition: PartitionInfo) -> bool:
        # What the decision is made on, taken before any await: the cache may move on meanwhile,
        # and the writes must be conditional on what was decided from.
        target, replicas, version = partition.target_replicas, list(partition.replicas), partition.state_version
        adding, removing = list(partition.adding_replicas), list(partition.removing_replicas)
        state = final_state(partition, target, set(self.metadata.brokers), self.election.epoch)
        if state is None:
            return False
        node = await self.store.get(znodes.topic_path(topic.name))
        if node is None:
            return False
        assignment = znodes.decode_assignment(node.data)
        index = partition.index
        if (index >= len(assignment.replicas) or assignment.replicas[index] != replicas
                or assignment.adding.get(index, []) != adding or assignment.removing.get(index, []) != removing
                or (assignment.topic_id is not None and assignment.topic_id != topic.topic_id)):
            return False  # the cache is behind the node (a newer reassignment, a new topic): wait for it
        PartitionReplicas(target, [], []).write_to(assignment, index)
        try:
            await self.store.commit([
                SetData(znodes.topic_path(topic.name), znodes.encode(assignment), version=node.version),
                *state_writes(topic.name, {partition.index: (state, version)}),
            ])
        except (BadVersionError, NoNodeError):
            return False
        log.info("reassignment of %s-%d completed: replicas %s, leader %d, epoch %d, isr %s (was %s)",
                 topic.name, partition.index, target, state.leader, state.leader_epoch, state.isr, replicas)
        # Until the cache shows it, the partition would look unfinished still.
        await self.metadata.wait_for(lambda: not partition.reassigning or partition.state_version != version
                                     or self.metadata.topics.get(topic.name) is not topic)
        return True


def final_state(partition: PartitionInfo, replicas: list[int], live: set[int],
                controller_epoch: int) -> PartitionState | None:
    """The partition's state once its replicas are ``replicas``: the ISR kept to them, led by the
    current leader when it stays and is alive, else by the first of them alive and in sync, in a new
    leader epoch; None when none of them is in sync and alive."""
    isr = [r for r in partition.isr if r in replicas]
    if partition.leader in replicas and partition.leader in live and partition.leader in isr:
        leader = partition.leader
    else:
        candidates = [r for r in replicas if r in isr and r in live]
        if not candidates:
            return None
        leader = candidates[0]
    assert leader != NO_LEADER
    return PartitionState(leader, partition.leader_epoch + 1, isr, controller_epoch)

