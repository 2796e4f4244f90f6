"""The broker: builds its layers, starts them in Kafka's order, and holds them for the handlers.

The layers, each owning its state: the metadata store (ZooKeeper with ``zookeeper.connect``, else a
local file) and this broker's cache of it, the log manager (partition logs on disk), the replica
manager (partition replicas, reads and writes), the controller (topic changes) and its election,
the group and transaction coordinators, and periodic log housekeeping.  Each gets what it needs when it is built;
none reaches back into the broker.  The cache tells the others of changes through listeners wired
here.  Handlers receive the ``Broker`` and call its layers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from pykafkad.client_telemetry import ClientTelemetry
from pykafkad.config import BrokerConfig
from pykafkad.config_changes import apply_dynamic_broker_configs
from pykafkad.controller import Controller
from pykafkad.controller.controlled_shutdown import controlled_shutdown
from pykafkad.controller.election import ControllerElection
from pykafkad.controller.leader_election import LeaderElections
from pykafkad.controller.leadership import PartitionLeadership
from pykafkad.controller.reassignment import PartitionReassignments
from pykafkad.coordinator.group import GroupCoordinator
from pykafkad.coordinator.share.coordinator import ShareCoordinator
from pykafkad.coordinator.transaction.coordinator import TransactionCoordinator
from pykafkad.coordinator.transaction.verification import TransactionVerifier
from pykafkad.errors import StartupError
from pykafkad.log.housekeeping import LogHousekeeper
from pykafkad.log.manager import LogManager
from pykafkad.log.meta_properties import MetaPropertiesMismatch, check_or_write
from pykafkad.metadata.cluster_metadata import ClusterMetadata, TopicInfo
from pykafkad.metadata.local_store import LocalMetadataStore
from pykafkad.metadata.model import BrokerInfo
from pykafkad.metadata.registration import BrokerIdInUseError, keep_registered, register_broker
from pykafkad.metadata.store import MetadataStore, StoreUnavailableError
from pykafkad.metadata.zookeeper_store import ZooKeeperMetadataStore
from pykafkad.observability import kafka_metrics
from pykafkad.producer_ids import ProducerIdAllocator
from pykafkad.quota.client_quota import ClientQuotaManager
from pykafkad.replica.replica_manager import ReplicaManager
from pykafkad.security import scram_credentials
from pykafkad.security.acl_store import AclStore
from pykafkad.security.authorizer import Authorizer
from pykafkad.security.scram_credentials import ScramCredential
from pykafkad.share.dead_letters import DeadLetterWriter
from pykafkad.share.share_group_offsets import ShareGroupOffsets
from pykafkad.share.share_partition_manager import SharePartitionManager
from pykafkad.share.share_persister import SharePersister

if TYPE_CHECKING:
    from pykafkad.schema_registry.record_validation import RecordValidator
    from pykafkad.schema_registry.schema_source import SchemaSource

log = logging.getLogger(__name__)

STORE_CLOSE_TIMEOUT_S = 5.0


def metadata_store(config: BrokerConfig) -> MetadataStore:
    """ZooKeeper when ``zookeeper.connect`` is set, else the single-node file store."""
    connect = config["zookeeper.connect"]
    if connect:
        return ZooKeeperMetadataStore(connect, config["zookeeper.session.timeout.ms"],
                                      config["zookeeper.connection.timeout.ms"])
    return LocalMetadataStore(config.log_dirs[0])


class Broker:
    """Everything a request handler may touch."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.logs = LogManager(config)
        self.store = metadata_store(config)
        self.metadata = ClusterMetadata(self.store, config.node_id, config.inter_broker_listener.name)
        self.replicas = ReplicaManager(config, self.logs, self.metadata)
        self.controller = Controller(config, self.metadata, self.logs, self.replicas)
        self.replicas.topic_turn = self.controller.topic_change
        self.election = ControllerElection(self.store, self.metadata, config.node_id)
        self.leadership = PartitionLeadership(config, self.metadata, self.election)
        self.elections = LeaderElections(config, self.metadata, self.election)
        self.reassignments = PartitionReassignments(self.metadata, self.election)
        self.producer_ids = ProducerIdAllocator(self.store, config.node_id)
        self.shutting_down = trio.Event()
        self.housekeeping = LogHousekeeper(config, self.logs)
        self.groups = GroupCoordinator(config, self.metadata, self.replicas, self.controller)
        self.share_coordinator = ShareCoordinator(config, self.metadata, self.replicas, self.controller)
        self.replicas.leadership_listeners.append(self.share_coordinator.on_leadership)
        share_persister = SharePersister(config, self.metadata, self.share_coordinator)
        self.share_partitions = SharePartitionManager(
            config, self.metadata, self.replicas, share_persister,
            DeadLetterWriter(config, self.metadata, self.replicas, self.controller))
        self.share_group_offsets = ShareGroupOffsets(config, self.metadata, self.replicas, share_persister,
                                                     self.groups)
        self.replicas.leadership_listeners.append(self.share_partitions.on_leadership)
        self.client_telemetry = ClientTelemetry(config, self.metadata)
        self.controller.topic_deleted_listeners.append(self.groups.on_topic_deleted)
        self.replicas.leadership_listeners.append(self.groups.on_leadership)
        self.transactions = TransactionCoordinator(config, self.metadata, self.replicas, self.controller,
                                                   self.producer_ids)
        self.replicas.leadership_listeners.append(self.transactions.on_leadership)
        self.replicas.marker_listeners.append(self.groups.on_marker)
        self.txn_verifier = TransactionVerifier(config, self.metadata, self.transactions)
        # Client quotas (/config/users, /config/clients), measured and enforced per connection.
        self.client_quotas = ClientQuotaManager(config, self.metadata)
        # ACLs are loaded and enforced only with an authorizer configured, as in Kafka.
        self.acls = AclStore(self.store)
        self.authorizer = Authorizer(config, self.acls) if config["authorizer.class.name"] else None
        # What the metadata cache's changes mean for this broker (Kafka's LeaderAndIsr, StopReplica
        # and dynamic config notifications).
        self.metadata.partition_listeners.append(self.replicas.apply)
        self.metadata.topic_removed_listeners.append(self.replicas.remove_topic)
        self.metadata.topic_removed_listeners.append(self.groups.topic_removed)
        self.metadata.topic_removed_listeners.append(kafka_metrics.forget_topic)
        self.metadata.topic_configs_listeners.append(self.logs.apply_settings)
        self.metadata.broker_configs_listeners.append(self._broker_configs_changed)
        # Schema validation of produced records: made on first use (it brings librdkafka and the
        # schema parsers), its reader of _schemas run in the broker's nursery.
        self._nursery: trio.Nursery | None = None
        self._schema_source: SchemaSource | None = None
        self._record_validator: RecordValidator | None = None

    def scram_credential(self, user: str, mechanism: str) -> ScramCredential | None:
        """``user``'s stored SCRAM credential for ``mechanism`` (``/config/users/<user>``), if any."""
        text = self.metadata.user_configs.get(user, {}).get(mechanism)
        return scram_credentials.decode(text) if text else None

    def _broker_configs_changed(self) -> None:
        apply_dynamic_broker_configs(self.config, self.metadata.broker_configs)
        for topic in self.metadata.topics.values():
            self.logs.apply_settings(topic)

    async def controlled_shutdown(self) -> None:
        """In a cluster, hand this broker's leaderships over before it stops (controlled.shutdown.enable)."""
        if self.config["zookeeper.connect"] and self.config["controlled.shutdown.enable"]:
            c = self.config
            wait_s = c["controlled.shutdown.max.retries"] * c["controlled.shutdown.retry.backoff.ms"]
            await controlled_shutdown(self.metadata, self.election, self.config.node_id, wait_s / 1000)

    def connection_closed(self, connection: int) -> None:
        """A client's connection closed: what lives only as long as it ends (share sessions)."""
        self.share_partitions.connection_closed(connection)

    def begin_shutdown(self) -> None:
        """Stop long-polls early so in-flight fetches answer with what they have."""
        self.shutting_down.set()
        self.replicas.shutdown()

    # -- topics --------------------------------------------------------------------------------

    def topic(self, name: str) -> TopicInfo | None:
        return self.metadata.topics.get(name)

    # -- schema validation ---------------------------------------------------------------------

    def schema_source(self) -> SchemaSource:
        """Where this broker reads the registry's schemas (its own registry's, or a reader of
        _schemas of its own)."""
        if self._schema_source is None:
            from pykafkad.schema_registry.schema_source import SchemaSource
            from pykafkad.schema_registry.server import broker_client
            if self._nursery is None:
                raise RuntimeError("the broker is not running")
            self._schema_source = SchemaSource(self.config, self._nursery, broker_client(self.config))
        return self._schema_source

    def record_validator(self) -> RecordValidator:
        if self._record_validator is None:
            from pykafkad.schema_registry.record_validation import RecordValidator
            self._record_validator = RecordValidator(self.schema_source())
        return self._record_validator

    # -- lifecycle -----------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start, then run the broker's long-lived tasks until cancelled.

        The order is Kafka's: connect to the metadata store and read the cluster, open (and
        recover) this broker's logs, register the broker, join the controller election, then start
        the coordinators and housekeeping.  Started means ready to serve.
        """
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await self._start(nursery)
                task_status.started()
        finally:
            self.metadata.close()
            with trio.move_on_after(STORE_CLOSE_TIMEOUT_S) as scope:
                scope.shield = True
                await self.store.close()

    async def _start(self, nursery: trio.Nursery) -> None:
        config = self.config
        try:
            await self.store.start()
            await self.metadata.start(nursery, config["cluster.id"])
        except StoreUnavailableError as e:
            raise StartupError(f"zookeeper.connect={config['zookeeper.connect']}: cannot reach ZooKeeper "
                               f"({e}); start ZooKeeper or fix zookeeper.connect") from e
        try:
            check_or_write(config.log_dirs, config.node_id, self.metadata.cluster_id)
        except MetaPropertiesMismatch as e:
            raise StartupError(str(e)) from e
        apply_dynamic_broker_configs(config, self.metadata.broker_configs)
        if self.authorizer is not None:
            await nursery.start(self.acls.run)
        self.logs.load_all(self.metadata)
        await nursery.start(self.replicas.run)
        for topic in self.metadata.topics.values():
            self.replicas.apply(topic)
        host, port = config.advertised_endpoint
        me = BrokerInfo(config.node_id, host, port, config["broker.rack"], config.advertised_endpoints,
                        {lst.name: lst.security_protocol for lst in config.advertised})
        session_timeout_ms = config["zookeeper.session.timeout.ms"]
        try:
            await register_broker(self.store, me, session_timeout_ms)
        except BrokerIdInUseError as e:
            raise StartupError(str(e)) from e
        keep_registered(self.store, me, session_timeout_ms, nursery)
        await self.metadata.wait_for(lambda: config.node_id in self.metadata.brokers)
        await nursery.start(self.election.run)
        await nursery.start(self.leadership.run)
        await nursery.start(self.elections.run)
        await nursery.start(self.reassignments.run)
        await nursery.start(self.housekeeping.run)
        await nursery.start(self.groups.run)
        await nursery.start(self.share_coordinator.run)
        await nursery.start(self.share_partitions.run)
        await nursery.start(self.transactions.run)

    def close(self) -> None:
        self.replicas.checkpoint_high_watermarks()
        self.logs.close_all()
