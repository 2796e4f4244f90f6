"""The controller keeping every partition led as brokers die and return.

While this broker is the controller, each change of the live brokers, of the replicas brokers
report on failed log dirs (``offline_replicas``), or of configs (one may allow an unclean
election), and its own election (the previous controller may have died with work undone), runs
every partition through ``partition_leadership.next_state`` and writes the partitions that must
change, a topic's in a few commits, each state conditional on the version the cache last read.  A
commit that loses (a newer state of one of its partitions was written meanwhile) is retried once
the cache has the newer state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from pykafkad.config import BrokerConfig
from pykafkad.controller.election import ControllerElection
from pykafkad.controller.offline_replicas import OfflineReplicas
from pykafkad.controller.partition_leadership import next_state
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.partition_state_writes import state_writes
from pykafkad.metadata.store import BadVersionError, NoNodeError, StoreError
from pykafkad.metadata.znodes import PartitionState
from pykafkad.topic_config import topic_setting

log = logging.getLogger(__name__)

UNCLEAN = "unclean.leader.election.enable"
# Partition states of one topic written in one commit: 1,000 ops and a notice, well inside
# ZooKeeper's 1 MB request limit.
_STATES_PER_COMMIT = 500


class PartitionLeadership:
    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, election: ControllerElection) -> None:
        self.config = config
        self.metadata = metadata
        self.store = metadata.store
        self.election = election
        # Config changes seen: one may allow an unclean election for a partition offline now.
        self._config_changes = 0
        # The replicas each broker reports on its failed log dirs (Kafka's JBOD failover).
        self.offline = OfflineReplicas(self.store)
        metadata.topic_configs_listeners.append(lambda _topic: self._configs_changed())
        metadata.broker_configs_listeners.append(self._configs_changed)

    def _configs_changed(self) -> None:
        self._config_changes += 1

    def _situation(self) -> tuple[int, frozenset[int], int, int]:
        return self.election.epoch, frozenset(self.metadata.brokers), self._config_changes, self.offline.generation

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(self.offline.run)
            task_status.started()
            await self._lead()

    async def _until(self, predicate: Callable[[], bool]) -> None:
        """Until ``predicate`` holds, checked after each change of the cache or of the offline replicas."""
        while not predicate():
            await self._next_change(predicate)

    async def _next_change(self, predicate: Callable[[], bool]) -> None:
        generation = self.offline.generation
        async with trio.open_nursery() as nursery:
            async def on_metadata() -> None:
                await self.metadata.wait_for(lambda: predicate() or self.offline.generation != generation)
                nursery.cancel_scope.cancel()

            async def on_offline() -> None:
                await self.offline.changed_since(generation)
                nursery.cancel_scope.cancel()

            nursery.start_soon(on_metadata)
            nursery.start_soon(on_offline)

    async def _lead(self) -> None:
        done: tuple[int, frozenset[int], int, int] | None = None
        while True:
            await self._until(lambda d=done: self.election.is_controller and self._situation() != d)
            situation = self._situation()
            try:
                complete = await self._reconcile(set(situation[1]), situation[0])
            except StoreError as e:
                log.warning("partition leadership: %s; trying again", e)
                complete = False
            if complete:
                done = situation
            else:
                # Try again once the cache has read what was written meanwhile.
                await self.metadata.settled()
                await trio.sleep(0.05)

    async def _reconcile(self, live: set[int], controller_epoch: int) -> bool:
        complete = True
        for topic in list(self.metadata.topics.values()):
            unclean = (topic_setting(topic.configs, self.config, UNCLEAN) or "").lower() == "true"
            decided: dict[int, tuple[PartitionState, int]] = {}
            was: dict[int, tuple[int, list[int]]] = {}
            for partition in list(topic.partitions):
                offline = self.offline.brokers(topic.name, partition.index) if self.offline.any() else frozenset()
                state = next_state(partition, live, controller_epoch, unclean, offline)
                if state is not None:
                    decided[partition.index] = (state, partition.state_version)
                    was[partition.index] = (partition.leader, partition.isr)
            # A topic's changes in a few commits, not one per partition: a broker leaving touches
            # every partition it was in sync on, and each commit is one round trip and one notice
            # that every broker reads.  A commit that loses to a concurrent write of one of its
            # partitions (an ISR change) is made again, decided afresh, on the next pass.
            indexes = list(decided)
            for start in range(0, len(indexes), _STATES_PER_COMMIT):
                chunk = {i: decided[i] for i in indexes[start:start + _STATES_PER_COMMIT]}
                try:
                    await self.store.commit(state_writes(topic.name, chunk))
                except (BadVersionError, NoNodeError):
                    complete = False
                    continue
                for index, (state, _) in chunk.items():
                    log.info("partition %s-%d: leader %d, epoch %d, isr %s (was leader %d, isr %s; live brokers %s)",
                             topic.name, index, state.leader, state.leader_epoch, state.isr, *was[index],
                             sorted(live))
        return complete
