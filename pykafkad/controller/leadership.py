"""The controller keeping every partition led as brokers die and return.

While this broker is the controller, each change of the live brokers or of configs (one may
allow an unclean election), and its own election (the previous controller may have died with
work undone), runs every partition through ``partition_leadership.next_state`` and writes the
partitions that must change, each a conditional write of its state node on the version the
cache last read.  A write that loses (a
newer state was written meanwhile) is retried once the cache has the newer state.
"""

from __future__ import annotations

import logging

import trio

from pykafkad.config import BrokerConfig
from pykafkad.controller.election import ControllerElection
from pykafkad.controller.partition_leadership import next_state
from pykafkad.metadata import znodes
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.store import BadVersionError, NoNodeError, StoreError
from pykafkad.topic_config import topic_setting

log = logging.getLogger(__name__)

UNCLEAN = "unclean.leader.election.enable"


class PartitionLeadership:
    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, election: ControllerElection) -> None:
        self.config = config
        self.metadata = metadata
        self.store = metadata.store
        self.election = election
        # Config changes seen: one may allow an unclean election for a partition offline now.
        self._config_changes = 0
        metadata.topic_configs_listeners.append(lambda _topic: self._configs_changed())
        metadata.broker_configs_listeners.append(self._configs_changed)

    def _configs_changed(self) -> None:
        self._config_changes += 1

    def _situation(self) -> tuple[int, frozenset[int], int]:
        return self.election.epoch, frozenset(self.metadata.brokers), self._config_changes

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        done: tuple[int, frozenset[int], int] | None = None
        while True:
            await self.metadata.wait_for(lambda d=done: self.election.is_controller and self._situation() != d)
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
            for partition in list(topic.partitions):
                state = next_state(partition, live, controller_epoch, unclean)
                if state is None:
                    continue
                try:
                    await self.store.set(znodes.partition_state_path(topic.name, partition.index),
                                         znodes.encode_partition_state(state), version=partition.state_version)
                except (BadVersionError, NoNodeError):
                    complete = False
                    continue
                log.info("partition %s-%d: leader %d, epoch %d, isr %s (was leader %d, isr %s; live brokers %s)",
                         topic.name, partition.index, state.leader, state.leader_epoch, state.isr,
                         partition.leader, partition.isr, sorted(live))
        return complete
