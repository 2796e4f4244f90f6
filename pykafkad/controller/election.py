"""Controller election, as Kafka's brokers ran it on ZooKeeper.

Every broker races to create the ephemeral ``/controller`` node; the one that does is the
controller and bumps ``/controller_epoch`` (a conditional write, so two short-lived winners can
never share an epoch).  The others watch the node, and when it vanishes (its broker died or lost
its session) they race again.  A single broker with the local store wins the first race.

A claim whose answer was lost (the connection to ZooKeeper dropped after the node was made) or
whose epoch bump failed leaves the node naming this broker: the next attempt finds it and goes on
as the controller, as Kafka's controller checks after a NodeExists, rather than leaving the
cluster with a controller node that nobody acts on.
"""

from __future__ import annotations

import logging
import time

import trio

from pykafkad.metadata import znodes
from pykafkad.metadata.cluster_metadata import ClusterMetadata
from pykafkad.metadata.store import BadVersionError, MetadataStore, NodeExistsError, StoreError

log = logging.getLogger(__name__)

# How often a broker that lost the race, while its cache shows no controller, checks the node itself.
UNSEEN_WINNER_CHECK_S = 3.0


class ControllerElection:
    def __init__(self, store: MetadataStore, metadata: ClusterMetadata, node_id: int) -> None:
        self.store = store
        self.metadata = metadata
        self.node_id = node_id
        self._epoch = 0
        # Set by a controlled shutdown: this broker races no more.
        self.retired = False

    @property
    def epoch(self) -> int:
        """The epoch this broker won with; 0 while it is not the controller."""
        return self._epoch

    @epoch.setter
    def epoch(self, value: int) -> None:
        self._epoch = value
        # is_controller also reads the cache, which may have applied the new controller and epoch
        # nodes before this broker's own write of the epoch returned: whoever waits on the cache
        # for is_controller must look again now, or it waits for a change that never comes.
        self.metadata.wake()

    @property
    def is_controller(self) -> bool:
        """Whether this broker won the election, as the cache now shows it (so a wait on the cache
        sees it become true)."""
        return (self.metadata.controller_id == self.node_id and self.epoch > 0
                and self.metadata.controller_epoch == self.epoch)

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Race for the controller now and each time it is gone; started once a controller is known."""
        started = False
        while True:
            try:
                if not self.retired:
                    await self._race()
            except StoreError as e:
                log.warning("controller election: %s; trying again", e)
                await trio.sleep(0.5)
                continue
            if not await self._controller_seen():
                continue
            if not started:
                task_status.started()
                started = True
            await self.metadata.wait_for(lambda: self.metadata.controller_id == -1)
            if self.epoch:
                log.warning("broker %d is no longer the controller (epoch %d)", self.node_id, self.epoch)
            self.epoch = 0

    async def resign(self) -> None:
        """Leave the election, and give up the controller's node if this broker holds it, so that
        another broker becomes the controller now rather than when this one's session expires."""
        self.retired = True
        if self.epoch and self.metadata.controller_id == self.node_id:
            node = await self.store.get(znodes.CONTROLLER)
            if node is not None and znodes.decode_controller(node.data) == self.node_id:
                await self.store.delete(znodes.CONTROLLER, version=node.version)
                log.info("broker %d resigned as controller (epoch %d)", self.node_id, self.epoch)
        self.epoch = 0

    async def _controller_seen(self) -> bool:
        """Until the cache shows a controller: True; or False when the node is gone meanwhile
        without the cache having shown it (a winner that resigned or died at once leaves no
        notification), and the broker must race again."""
        while True:
            with trio.move_on_after(UNSEEN_WINNER_CHECK_S):
                await self.metadata.wait_for(lambda: self.metadata.controller_id != -1)
                return True
            if await self.store.get(znodes.CONTROLLER) is None:
                return False

    async def _race(self) -> None:
        while True:
            try:
                await self.store.create(znodes.CONTROLLER,
                                        znodes.encode_controller(self.node_id, int(time.time() * 1000)),
                                        ephemeral=True)
                break
            except NodeExistsError:
                node = await self.store.get(znodes.CONTROLLER)
            if node is None:
                continue  # the winner is gone already
            if znodes.decode_controller(node.data) != self.node_id:
                return
            log.info("the controller node already names broker %d (an earlier claim of its own whose "
                     "answer was lost): going on as the controller", self.node_id)
            break
        while True:
            node = await self.store.get(znodes.CONTROLLER_EPOCH)
            try:
                if node is None:
                    await self.store.create(znodes.CONTROLLER_EPOCH, b"1")
                    epoch = 1
                else:
                    epoch = int(node.data or b"0") + 1
                    await self.store.set(znodes.CONTROLLER_EPOCH, str(epoch).encode(), version=node.version)
            except (NodeExistsError, BadVersionError):
                continue
            self.epoch = epoch
            log.info("broker %d is the controller, epoch %d", self.node_id, epoch)
            return
