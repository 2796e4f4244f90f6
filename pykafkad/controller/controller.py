"""The controller: the one place topics are created, deleted, given more partitions and configured.

It checks each request as Kafka's controller does (names, counts, replica assignments, configs)
and writes the change as Kafka's znodes through the metadata store, in one all-or-none commit (a
topic too large for one request takes several, ``topic_node_writes.py``); then
it waits until this broker's metadata cache shows it, so the answer never runs ahead of Metadata.
The replica manager hears of the new partition states from the cache (Kafka's LeaderAndIsr).  The
logs this broker will host are opened first, on a worker thread, and handed to the log manager
before the commit, so Metadata never shows a partition of this broker that has no log.

Changes to one topic name (create, add partitions, delete) take turns (``topic_change``), as
Kafka's controller applies them one after another: whoever holds the turn may await (a worker
thread opening logs) without another change of the same name seeing or making half of it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import outcome
import trio

from pykafkad.config import BrokerConfig
from pykafkad.config_changes import warn_accepted_only
from pykafkad.controller.replica_placement import assign_replicas, manual_assignment_problem
from pykafkad.controller.topic_node_writes import add_partition_nodes, create_topic_nodes, delete_topic_nodes
from pykafkad.errors import KafkaError
from pykafkad.log.manager import LogManager
from pykafkad.metadata import features, znodes
from pykafkad.metadata.cluster_metadata import ClusterMetadata, TopicInfo, topic_name_problem
from pykafkad.metadata.store import (
    BadVersionError,
    Create,
    Delete,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    Op,
    SetData,
    StoreUnavailableError,
)
from pykafkad.metadata.znodes import PartitionState
from pykafkad.replica.replica_manager import ReplicaManager
from pykafkad.topic_config import validate_topic_configs
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

# How long a writer waits for this broker's cache to show its config write before answering anyway.
CACHE_WAIT_S = 10.0

TopicDeletedListener = Callable[[str], Awaitable[None]]


class Controller:
    """Topic changes, checked, written to the metadata and applied to this broker's replicas."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, logs: LogManager,
                 replicas: ReplicaManager) -> None:
        self.config = config
        self.metadata = metadata
        self.store = metadata.store
        self.logs = logs
        self.replicas = replicas
        self._topics_being_created: set[str] = set()
        # One lock per topic name with a change under way or waiting; dropped when nobody holds it.
        self._topic_change_locks: dict[str, trio.Lock] = {}
        # Told of each deleted topic before the deletion is acknowledged (the group coordinator
        # removes its committed offsets).
        self.topic_deleted_listeners: list[TopicDeletedListener] = []
        # Whether a broker creating partitions makes its own logs of them before it writes them.
        # On a cluster it does not: the other replicas' brokers make theirs only once they see the
        # partitions, so clients already retry the UNKNOWN_TOPIC_OR_PARTITION a produce gets
        # meanwhile (as from Kafka's brokers before they apply a new partition), and making this
        # broker's first put its disk on the path of every creation (seconds for thousands of
        # partitions while the other brokers make theirs on the same disk).  Its replica manager
        # makes them as soon as the partitions show, as every other broker's does.
        self._logs_first = not config["zookeeper.connect"]

    def is_being_created(self, name: str) -> bool:
        return name in self._topics_being_created

    @asynccontextmanager
    async def topic_change(self, name: str) -> AsyncIterator[None]:
        """Hold the turn to change topic ``name``; changes wait in arrival order (trio.Lock is fair).

        Whoever holds it may await (a worker thread opening logs) without another create, add or
        delete of the same name seeing or making half of a change.  Each change re-reads the
        topic once it holds the turn, so the second of two sees what the first left.
        """
        lock = self._topic_change_locks.setdefault(name, trio.Lock())
        try:
            async with lock:
                yield
        finally:
            # A release hands the lock straight to the next waiter, so "not locked" means nobody
            # holds or awaits it.
            if not lock.locked() and self._topic_change_locks.get(name) is lock:
                del self._topic_change_locks[name]

    async def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, str | None] | None = None,
        assignments: list[list[int]] | None = None,
        validate_only: bool = False,
        internal: bool = False,
    ) -> TopicInfo | None:
        """Create a topic as Kafka's CreateTopics does, or raise KafkaError with Kafka's code.

        On one broker the partition logs are created first, on a worker thread (each costs a few
        fsyncs, and a topic of thousands of partitions must not hold every other connection), so
        the topic can be written to the moment it shows.  While they are made the name is taken
        (TOPIC_ALREADY_EXISTS) but the topic is not yet visible; a CreatePartitions or DeleteTopics
        of the name waits for it and then sees the created topic.  On a cluster (``_logs_first``
        false) this broker's logs are made after, as every other broker's are.
        """
        num_partitions, replication_factor, clean_configs = self._checked_new_topic(
            name, num_partitions, replication_factor, configs, assignments)
        if validate_only:
            return None
        warn_accepted_only(f"topic {name}", clean_configs)
        settings = self.logs.settings_for(clean_configs)
        # Taken before the first checkpoint, so a second create of the name is refused at once.
        self._topics_being_created.add(name)
        try:
            # Normally free: it is only held here by a change still finishing on a deleted topic
            # of the same name.
            async with self.topic_change(name):
                replicas = assignments or assign_replicas(list(self.metadata.brokers), num_partitions,
                                                          replication_factor, racks=self._racks())
                hosted = [i for i, r in enumerate(replicas) if self._logs_first and self.config.node_id in r]
                await self.replicas.wait_removed(name)
                topic_id = uuid.uuid4()
                while topic_id in self.metadata.topics_by_id or topic_id.int == 0:
                    topic_id = uuid.uuid4()
                paths = self.logs.plan_new(name, hosted)
                # One epoch for the state nodes and the creation notice, which must say the same.
                epoch = self.metadata.controller_epoch
                opened, nodes = await _while_opening(
                    self.logs.open_new, (paths, settings, topic_id),
                    lambda: self._new_topic_nodes(name, topic_id, replicas, clean_configs, epoch))
                self.logs.creating[name] = topic_id
                self.logs.register(name, dict(zip(hosted, opened, strict=True)), settings)
                try:
                    split = await create_topic_nodes(
                        self.store, name, nodes[:2],
                        znodes.encode_created_notice(epoch, replicas), nodes[2:])
                except BaseException as e:
                    # The topic was not written: the new logs belong to nothing and must not stay open.
                    # (Another broker's topic of the name, written first, got logs of its own: see
                    # LogManager.belongs_to.)
                    _close_all(self.logs.unregister(name, hosted))
                    if isinstance(e, NodeExistsError):
                        raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.") from None
                    if isinstance(e, StoreUnavailableError):
                        raise _unconfirmed(f"the creation of topic '{name}'", e) from None
                    raise
                finally:
                    self.logs.creating.pop(name, None)
                await self.metadata.wait_for(lambda: self._shows(name, topic_id, whole=split))
                topic = self.metadata.topics[name]
                log.info("created topic %s with %d partition(s), id %s", name, num_partitions, topic_id)
                return topic
        finally:
            self._topics_being_created.discard(name)

    def _shows(self, name: str, topic_id: uuid.UUID, whole: bool = False) -> bool:
        """Whether the cache shows the topic ``topic_id`` (``whole``: with every partition's state,
        which a topic written in several commits may not have at first)."""
        topic = self.metadata.topics.get(name)
        return (topic is not None and topic.topic_id == topic_id
                and (not whole or all(p.leader >= 0 for p in topic.partitions)))

    def _new_topic_nodes(self, name: str, topic_id: uuid.UUID, replicas: list[list[int]],
                         configs: dict[str, str], controller_epoch: int) -> list[Op]:
        """A topic's nodes but its ``partitions`` node, configs first as Kafka writes them; every
        partition led by its first replica.  The topic's own two come first, then two for each
        partition."""
        ops: list[Op] = [
            Create(znodes.topic_config_path(name), znodes.encode_config(configs)),
            Create(znodes.topic_path(name), znodes.encode_assignment(topic_id, replicas)),
        ]
        ops += self._new_partition_nodes(name, replicas, 0, controller_epoch)
        return ops

    def _new_partition_nodes(self, name: str, replicas: list[list[int]], first: int,
                             controller_epoch: int | None = None) -> list[Op]:
        epoch = self.metadata.controller_epoch if controller_epoch is None else controller_epoch
        ops: list[Op] = []
        for index, assigned in enumerate(replicas[first:], start=first):
            state = PartitionState(leader=assigned[0], leader_epoch=0, isr=list(assigned), controller_epoch=epoch)
            ops.append(Create(znodes.partition_path(name, index), b""))
            ops.append(Create(znodes.partition_state_path(name, index), znodes.encode_partition_state(state)))
        return ops

    def _checked_new_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: dict[str, str | None] | None,
        assignments: list[list[int]] | None,
    ) -> tuple[int, int, dict[str, str]]:
        """Kafka's checks of a new topic: (partition count, replication factor, clean config overrides),
        the broker defaults filled in; or KafkaError."""
        problem = topic_name_problem(name)
        if problem:
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
        if name in self.metadata.topics or name in self._topics_being_created:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if assignments:
            if num_partitions != -1 or replication_factor != -1:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST,
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.",
                )
            self._check_assignments(assignments)
            num_partitions = len(assignments)
            replication_factor = len(assignments[0])
        if num_partitions == -1:
            num_partitions = self.config["num.partitions"]
        if replication_factor == -1:
            replication_factor = self.config["default.replication.factor"]
        if num_partitions <= 0:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if replication_factor <= 0:
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
        brokers = len(self.metadata.brokers)
        if replication_factor > brokers:
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): "
                f"The target replication factor of {replication_factor} cannot be reached because only "
                f"{brokers} broker(s) are registered.",
            )
        problem = validate_topic_configs(configs or {})
        if problem:
            raise KafkaError(ErrorCode.INVALID_CONFIG, problem)
        clean_configs = {key: str(value).strip() for key, value in (configs or {}).items()}
        return num_partitions, replication_factor, clean_configs

    def _check_assignments(self, assignments: list[list[int]]) -> None:
        sizes = {len(a) for a in assignments}
        if len(sizes) != 1 or 0 in sizes:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "All partitions should have the same number of replicas.")
        for replicas in assignments:
            unknown = [b for b in replicas if b not in self.metadata.brokers]
            if unknown:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"Replica assignment references unknown broker(s) {unknown}.")
            if len(set(replicas)) != len(replicas):
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"Duplicate brokers in replica assignment {replicas}.")

    async def maybe_auto_create(self, name: str) -> TopicInfo | None:
        """Create ``name`` with the broker defaults if auto.create.topics.enable allows it."""
        if not self.config["auto.create.topics.enable"]:
            return None
        try:
            return await self.create_topic(name)
        except KafkaError as e:
            if e.code == ErrorCode.TOPIC_ALREADY_EXISTS:
                # None while another request is still creating it: the client asks again.
                return self.metadata.topics.get(name)
            raise

    async def delete_topic(self, name: str, topic_id: uuid.UUID | None = None) -> TopicInfo:
        """Delete ``name`` (if given, only while it is still the topic ``topic_id``), or raise KafkaError.

        Waits for a change of the topic under way (partitions being added, the topic being
        created), then deletes the topic with every partition that change left.
        """
        async with self.topic_change(name):
            topic = self.metadata.topics.get(name)
            if topic is not None and topic_id is not None and topic.topic_id != topic_id:
                # The topic asked for by id was replaced by a new one of the same name meanwhile.
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, f"Topic id {topic_id} does not exist.")
            if topic is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 "This server does not host this topic-partition.")
            if not self.config["delete.topic.enable"]:
                raise KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.")
            try:
                await delete_topic_nodes(self.store, name, [p.index for p in topic.partitions],
                                         [Delete(znodes.partitions_path(name)), Delete(znodes.topic_path(name)),
                                          Delete(znodes.topic_config_path(name))])
            except StoreUnavailableError as e:
                raise _unconfirmed(f"the deletion of topic '{name}'", e) from None
            # The cache drops the topic and the replica manager stops serving it.
            await self.metadata.wait_for(lambda: self.metadata.topics.get(name) is not topic)
            # After the metadata: a commit racing with this sees the topic gone and is refused.
            for listener in self.topic_deleted_listeners:
                await listener(name)
            # The replica manager removes the logs (off the event loop: seconds for thousands of
            # partitions) when the cache drops the topic; the deletion is acknowledged once they
            # are gone here.
            await self.replicas.wait_removed(name)
            log.info("deleted topic %s", name)
            return topic

    async def add_partitions(self, name: str, count: int, assignments: list[list[int]] | None,
                             validate_only: bool) -> None:
        """Grow topic ``name`` to ``count`` partitions as Kafka's CreatePartitions does, or raise KafkaError.

        Changes of one topic take turns, as Kafka's controller applies them: a second request
        checks ``count`` against what the first left, and a request sent while the topic is still
        being created waits for it.  On one broker the new logs are opened first, on a worker thread
        (thousands of partitions must not stall other connections), and Metadata shows them once all
        are open; on a cluster they are made after, as in ``create_topic``.
        ``validate_only`` checks and opens nothing.
        """
        async with self.topic_change(name):
            topic = self.metadata.topics.get(name)
            if topic is None:
                # Kafka's UnknownTopicOrPartitionException carries no message of its own.
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            current = len(topic.partitions)
            self._check_partition_increase(topic, count, assignments)
            if validate_only:
                return
            settings = self.logs.log_settings(topic)
            node = await self.store.get(znodes.topic_path(name))
            if node is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            assignment = znodes.decode_assignment(node.data)
            existing = [[r for r in replicas if r not in assignment.removing.get(i, ())]
                        for i, replicas in enumerate(assignment.replicas)]
            replicas = assignment.replicas + (assignments or self._more_replicas(existing, count - current))
            hosted = [i for i in range(current, count) if self._logs_first and self.config.node_id in replicas[i]]
            paths = self.logs.plan_new(name, hosted)
            opened = await trio.to_thread.run_sync(self.logs.open_new, paths, settings, topic.topic_id)
            self.logs.register(name, dict(zip(hosted, opened, strict=True)), settings)
            # Holding the turn, nothing added partitions to or deleted this topic meanwhile; the
            # assignment is written only if nobody else changed it since it was read.
            try:
                await add_partition_nodes(
                    self.store, self._new_partition_nodes(name, replicas, current),
                    # A reassignment under way keeps its adding and removing replicas.
                    SetData(znodes.topic_path(name),
                            znodes.encode_assignment(topic.topic_id, replicas, assignment.adding,
                                                     assignment.removing),
                            version=node.version))
            except BaseException as e:
                _close_all(self.logs.unregister(name, hosted))
                if isinstance(e, StoreUnavailableError):
                    raise _unconfirmed(f"the new partitions of topic '{name}'", e) from None
                raise
            await self.metadata.wait_for(lambda: len(topic.partitions) >= count)
            # Its configs may have changed while the logs were opened (AlterConfigs does not wait).
            if self.logs.log_settings(topic) != settings:
                self.logs.apply_settings(topic)
            log.info("topic %s now has %d partitions", name, count)

    def _more_replicas(self, existing: list[list[int]], added: int) -> list[list[int]]:
        """Kafka's placement of added partitions: continuing the topic's round, from its partition 0's
        first replica when that broker is alive."""
        brokers = sorted(self.metadata.brokers)
        start = brokers.index(existing[0][0]) if existing and existing[0][0] in brokers else None
        rf = min(len(existing[0]) if existing else 1, len(brokers))
        return assign_replicas(brokers, added, rf, first_partition=len(existing), start_index=start,
                               racks=self._racks())

    def _racks(self) -> dict[int, str | None]:
        return {b.node_id: b.rack for b in self.metadata.brokers.values()}

    async def _put(self, path: str, data: bytes) -> int:
        """Write ``data`` to ``path``, creating the node if it is missing; its new version."""
        try:
            return await self.store.set(path, data)
        except NoNodeError:
            try:
                await self.store.create(path, data)
                return 0
            except NodeExistsError:
                return await self.store.set(path, data)

    async def set_topic_configs(self, topic: TopicInfo, configs: dict[str, str]) -> None:
        """Make ``configs`` the topic's overrides; returns once this broker's cache (and logs) have them."""
        path = znodes.topic_config_path(topic.name)
        version = await self._put(path, znodes.encode_config(configs))
        await self.metadata.wait_for(
            lambda: self.metadata.seen(path, version) or self.metadata.topics.get(topic.name) is not topic)

    async def set_broker_configs(self, resource: str, configs: dict[str, str]) -> None:
        """Make ``configs`` the dynamic configs of broker ``resource`` ("" for the cluster default)."""
        path = znodes.broker_config_path(resource)
        version = await self._put(path, znodes.encode_config(configs))
        await self.metadata.wait_for(lambda: self.metadata.seen(path, version))

    async def set_client_metrics(self, name: str, configs: dict[str, str]) -> None:
        """Make ``configs`` the keys of client-metrics subscription ``name``; none removes it, as
        Kafka drops a subscription whose every key was deleted."""
        await self._set_named_configs(znodes.client_metrics_path(name), configs,
                                      lambda: name not in self.metadata.client_metrics)

    async def set_group_configs(self, group: str, configs: dict[str, str]) -> None:
        """Make ``configs`` the keys of group ``group``'s config resource; none removes its node, so
        a group whose every key was deleted is no longer listed, as in Kafka."""
        await self._set_named_configs(znodes.group_config_path(group), configs,
                                      lambda: group not in self.metadata.group_configs)

    async def _set_named_configs(self, path: str, configs: dict[str, str], gone: Callable[[], bool]) -> None:
        """Write the config node at ``path`` (removed when ``configs`` is empty) and return once this
        broker's cache has it (``gone`` says when the cache has dropped it)."""
        if configs:
            version = await self._put(path, znodes.encode_config(configs))
            await self.metadata.wait_for(lambda: self.metadata.seen(path, version))
            return
        try:
            await self.store.delete(path)
        except NoNodeError:
            pass
        await self.metadata.wait_for(gone)

    async def alter_entity_configs(self, path: str, changes: Mapping[str, str | None]) -> None:
        """Set each key of ``changes`` in the config node at ``path`` (None removes the key), leaving
        its other keys alone: a user's node holds its SCRAM credentials and its quotas, changed by
        different requests.  The node is read from the store and written back only if unchanged
        (compare-and-set, else read again), so two brokers changing one node at once both land,
        whatever their caches hold.  A node left empty is removed unless it has children (a user's
        ``clients``); returns once this broker's cache has the change."""
        while True:
            node = await self.store.get(path)
            configs = znodes.decode_config(node.data) if node is not None else {}
            new = {k: v for k, v in configs.items() if k not in changes}
            new.update({k: v for k, v in changes.items() if v is not None})
            try:
                if node is None:
                    if not new:
                        return
                    await self.store.create(path, znodes.encode_config(new))
                    version = 0
                elif new:
                    version = await self.store.set(path, znodes.encode_config(new), node.version)
                else:
                    try:
                        await self.store.delete(path, node.version)
                        version = -1
                    except NotEmptyError:
                        version = await self.store.set(path, znodes.encode_config({}), node.version)
            except (BadVersionError, NodeExistsError, NoNodeError):
                continue  # another writer came first: apply the changes to what it left
            break
        # Bounded: another broker may delete or re-create the node before this cache sees our write,
        # and then the cache never shows exactly it (ZooKeeper restarts a re-created node's version).
        with trio.move_on_after(CACHE_WAIT_S):
            if version < 0:
                await self.metadata.wait_for(lambda: not self.metadata.seen(path, 0))
            else:
                await self.metadata.wait_for(lambda: self.metadata.seen(path, version))

    async def alter_user_configs(self, user: str, changes: Mapping[str, str | None]) -> None:
        """Change some configs of ``user`` (its SCRAM credentials), leaving its quotas and the rest."""
        await self.alter_entity_configs(znodes.user_config_path(user), changes)

    async def set_features(self, levels: dict[str, int]) -> None:
        """Make ``levels`` the cluster's finalized feature levels (level 0 features left out);
        returns once this broker's cache has them.  Kafka's ZooKeeper mode kept them in
        ``/feature``."""
        data = features.encode({name: level for name, level in levels.items() if level > 0})
        version = await self._put(features.FEATURE_ZNODE, data)
        await self.metadata.wait_for(lambda: self.metadata.features.epoch >= version + 1)

    def _check_partition_increase(self, topic: TopicInfo, count: int,
                                  assignments: list[list[int]] | None) -> None:
        """Kafka's checks of a CreatePartitions entry, in its order and with its messages."""
        current = len(topic.partitions)
        if count == current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
        if count < current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                             f"The topic {topic.name} currently has {current} partition(s); {count} "
                             f"would not be an increase.")
        if assignments is None:
            return
        additional = count - current
        if len(assignments) != additional:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"Attempted to add {additional} additional partition(s), but only "
                             f"{len(assignments)} assignment(s) were specified.")
        replication_factor = len(topic.partitions[0].replicas)
        for replicas in assignments:
            problem = manual_assignment_problem(replicas, self.metadata.brokers)
            if problem:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
            if len(replicas) != replication_factor:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes a partition with "
                                 f"{len(replicas)} replica(s), but this is not consistent with previous "
                                 f"partitions, which have {replication_factor} replica(s).")


def _close_all(opened: list) -> None:
    """Close logs that were opened for a change that did not happen."""
    for plog in opened:
        try:
            plog.close()
        except Exception:  # noqa: BLE001 - the change's own error is the one to report
            log.exception("closing an unused partition log %s failed", plog.dir)


def _unconfirmed(change: str, e: StoreUnavailableError) -> KafkaError:
    """A change the metadata store may or may not have taken: the client should look, then retry."""
    return KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"The metadata store did not confirm {change} ({e}); "
                                                   "look whether it happened before trying again.")


async def _while_opening(open_logs: Callable[..., list], args: tuple, build: Callable[[], list[Op]]
                         ) -> tuple[list, list[Op]]:
    """``open_logs(*args)`` on a worker thread while ``build()`` runs here: the Rust log creates the
    partition logs without the GIL, so a topic's nodes are encoded while its directories are made.
    Either's exception is raised as itself."""
    opening: list[outcome.Outcome] = []

    async def run() -> None:
        opening.append(await outcome.acapture(trio.to_thread.run_sync, open_logs, *args))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.lowlevel.checkpoint()  # the thread starts before the nodes are built
        built = outcome.capture(build)
    opened = opening[0].unwrap()
    if isinstance(built, outcome.Error):
        _close_all(opened)
    return opened, built.unwrap()
