"""The controller's view of the replicas brokers report on failed log dirs (Kafka's JBOD failover).

Each broker with a failed log dir names its replicas there in ``/brokers/offline_replicas/<id>``
(``replica/offline_replicas.py``).  Every broker watches these nodes, so whichever becomes
controller knows them at once; the controller elects leaders without those replicas
(``partition_leadership.next_state``).
"""

from __future__ import annotations

import logging

import trio

from pykafkad.metadata.store import MetadataStore, Node, NodeExistsError, StoreError, Watch
from pykafkad.replica.offline_replicas import OFFLINE_REPLICAS, TopicPartition, decode, offline_replicas_path

log = logging.getLogger(__name__)

# After a failed watch of a broker's node, the next try.
RETRY_S = 0.5


class OfflineReplicas:
    """The controller's view: which replicas each live broker reports offline, kept current by watches."""

    def __init__(self, store: MetadataStore) -> None:
        self.store = store
        self._by_broker: dict[int, frozenset[TopicPartition]] = {}
        self._watches: dict[int, Watch] = {}
        self._children: Watch | None = None
        self._reported: set[int] = set()  # the brokers with a node now, as last listed
        self._listed = trio.Event()
        # Counts the changes seen, so the controller knows when to look at its partitions again.
        self.generation = 0
        self._changed = trio.Event()

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Watch the brokers' nodes until cancelled; started once the nodes present now are read."""
        try:
            await self.store.create(OFFLINE_REPLICAS, b"")
        except NodeExistsError:
            pass
        try:
            self._children = await self.store.watch_children(OFFLINE_REPLICAS, self._brokers_listed)
            started = False
            while True:
                try:
                    await self._follow_listing()
                except StoreError as e:
                    log.warning("watching the brokers' offline replicas: %s; trying again", e)
                    await trio.sleep(RETRY_S)
                    self._listed.set()
                if not started:
                    task_status.started()
                    started = True
                await self._listed.wait()
        finally:
            for watch in [self._children, *self._watches.values()]:
                if watch is not None:
                    watch.cancel()
            self._watches.clear()

    def _brokers_listed(self, children: list[str] | None) -> None:
        self._reported = {int(c) for c in children or [] if c.isdigit()}
        self._listed.set()

    async def _follow_listing(self) -> None:
        """Watch the nodes of the brokers listed now, and forget those that are gone."""
        self._listed = trio.Event()
        for node_id in list(self._watches):
            if node_id not in self._reported:
                self._watches.pop(node_id).cancel()
                if self._by_broker.pop(node_id, None) is not None:
                    self._bump()
        for node_id in sorted(self._reported - set(self._watches)):
            self._watches[node_id] = await self.store.watch_data(
                offline_replicas_path(node_id), lambda node, b=node_id: self._broker_changed(b, node))

    def brokers(self, topic: str, index: int) -> frozenset[int]:
        """The brokers whose replica of ``topic``-``index`` is on a failed log dir."""
        return frozenset(b for b, replicas in self._by_broker.items() if (topic, index) in replicas)

    def any(self) -> bool:
        return bool(self._by_broker)

    async def changed_since(self, generation: int) -> None:
        """Until a change after ``generation`` has been seen."""
        while self.generation == generation:
            await self._changed.wait()

    def _bump(self) -> None:
        self.generation += 1
        self._changed.set()
        self._changed = trio.Event()

    def _broker_changed(self, node_id: int, node: Node | None) -> None:
        try:
            replicas = decode(node.data) if node is not None else frozenset()
        except (ValueError, TypeError, AttributeError) as e:
            log.warning("the offline replicas node of broker %d does not parse: %s", node_id, e)
            return
        old = self._by_broker.get(node_id, frozenset())
        if replicas == old:
            return
        if replicas:
            self._by_broker[node_id] = replicas
        else:
            self._by_broker.pop(node_id, None)
        log.info("broker %d reports %d replica(s) on failed log dirs (was %d)", node_id, len(replicas), len(old))
        self._bump()
