"""The broker: builds its layers in start-up order and holds them for the handlers.

The layers, each owning its state: the log manager (partition logs on disk), the cluster metadata,
the replica manager (partition replicas, reads and writes), the controller (topic changes), the
group coordinator, and periodic log housekeeping.  Each gets what it needs when it is built; none
reaches back into the broker.  Handlers receive the ``Broker`` and call its layers.
"""

from __future__ import annotations

import logging

import trio

from pykafkad.config import BrokerConfig
from pykafkad.config_changes import apply_dynamic_broker_configs
from pykafkad.controller import Controller
from pykafkad.coordinator.group import GroupCoordinator
from pykafkad.log.housekeeping import LogHousekeeper
from pykafkad.log.manager import LogManager
from pykafkad.metadata.cluster_metadata import ClusterMetadata, FileMetadataStore, TopicInfo
from pykafkad.producer_ids import ProducerIdAllocator
from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)


class Broker:
    """Everything a request handler may touch."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        host, port = config.advertised_endpoint
        self.logs = LogManager(config)
        self.metadata = ClusterMetadata(
            FileMetadataStore(config.log_dirs[0]), config.node_id, host, port, config["cluster.id"]
        )
        apply_dynamic_broker_configs(self)
        self.logs.load_all(self.metadata)
        self.replicas = ReplicaManager(config, self.logs, self._topic_configs)
        for topic in self.metadata.topics.values():
            self.replicas.apply(topic)
        self.producer_ids = ProducerIdAllocator(self.metadata)
        self.controller = Controller(config, self.metadata, self.logs, self.replicas)
        self.shutting_down = trio.Event()
        # Each is started with nursery.start() before the listeners accept, and stopped at shutdown.
        self.background_tasks: list = []
        self.housekeeping = LogHousekeeper(config, self.logs)
        self.background_tasks.append(self.housekeeping.run)
        self.groups = GroupCoordinator(config, self.metadata, self.replicas, self.controller)
        self.controller.topic_deleted_listeners.append(self.groups.on_topic_deleted)
        self.background_tasks.append(self.groups.run)

    def _topic_configs(self, name: str) -> dict[str, str] | None:
        topic = self.metadata.topics.get(name)
        return None if topic is None else topic.configs

    def begin_shutdown(self) -> None:
        """Stop long-polls early so in-flight fetches answer with what they have."""
        self.shutting_down.set()
        self.replicas.shutdown()

    # -- topics --------------------------------------------------------------------------------

    def topic(self, name: str) -> TopicInfo | None:
        return self.metadata.topics.get(name)

    # -- lifecycle -----------------------------------------------------------------------------

    async def run_background(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Long-lived broker tasks (coordinators, log housekeeping); cancelled at shutdown."""
        async with trio.open_nursery() as nursery:
            for start in self.background_tasks:
                await nursery.start(start)
            task_status.started()

    def close(self) -> None:
        self.logs.close_all()
