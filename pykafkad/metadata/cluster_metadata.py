"""This broker's cache of the cluster: brokers, controller, topics, partition states, configs.

The cache is fed only by the metadata store's watches, never written by the rest of the broker:
the controller writes nodes through the store and waits (``wait_for``) until the cache shows its
change.  One task applies the store's notifications in the order they came, so a layer reading
the cache never sees half of one.

A topic is shown once its assignment, its configs and the first state of every partition have
been read; partitions added later are shown once their states have been read.  A partition with
no state node yet (no leader elected) shows leader -1.  Partition states are not watched one by
one: each topic's ``partitions`` node carries the states its last write changed
(``partition_state_writes``), and one watch on it delivers them; a topic first seen, or writes
missed, lead to one read of all its states together.
Listeners hear of each shown or changed partition (the replica manager: Kafka's LeaderAndIsr),
each removed topic, and config changes.

Quota configs are read from ``/config/clients/<client-id>``, ``/config/users/<user>`` (beside the
user's SCRAM credentials) and ``/config/users/<user>/clients/<client-id>``: a watch on each
entity node, on each user's children and on its ``clients`` node, so a quota set through any
broker reaches every broker.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import trio

from pykafkad.metadata import features, znodes
from pykafkad.metadata.model import INTERNAL_TOPICS, BrokerInfo, PartitionInfo, TopicInfo
from pykafkad.metadata.store import MetadataStore, Node, NodeExistsError, Watch
from pykafkad.metadata.watch_events import WatchEvents
from pykafkad.metadata.znodes import PartitionState
from pykafkad.quota.entity import QuotaEntity, parse_quotas

__all__ = ["BrokerInfo", "ClusterMetadata", "PartitionInfo", "TopicInfo", "new_cluster_id", "topic_name_problem"]

log = logging.getLogger(__name__)

_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME = 249

PartitionListener = Callable[[TopicInfo, list[PartitionInfo]], None]
# After a topic's notice shows that writes were missed (written faster than they were read), the
# wait before all its states are read: a burst of writes (a broker's return, with an ISR expansion
# per partition) then costs one read of every state per interval, not one per notice.
_FULL_READ_DELAY_S = 0.05
TopicListener = Callable[[TopicInfo], None]



def topic_name_problem(name: str | None) -> str | None:
    """Kafka's topic-name rules; returns the reason a name is illegal, or None."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > MAX_TOPIC_NAME:
        return f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME} characters"
    if not _TOPIC_NAME.match(name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than "
                "ASCII alphanumerics, '.', '_' and '-'")
    return None


def new_cluster_id() -> str:
    """A cluster id shaped like Kafka's: a random UUID in URL-safe base64 without padding."""
    return znodes.kafka_uuid(uuid.uuid4())


@dataclass
class _TopicNodes:
    """What the store has said so far about one topic's nodes."""

    topic_id: uuid.UUID | None = None
    replicas: list[list[int]] = field(default_factory=list)
    # The partitions being reassigned: the replicas each is adding and removing.
    adding: dict[int, list[int]] = field(default_factory=dict)
    removing: dict[int, list[int]] = field(default_factory=dict)
    # Partition index -> (state, node version); a key is present once its first read came back.
    states: dict[int, tuple[PartitionState | None, int]] = field(default_factory=dict)
    configs: dict[str, str] | None = None
    config_watch: Watch | None = None
    assignment_watch: Watch | None = None
    # The watch on the topic's partitions node, and that node's version last read (None: read
    # every state on its next report).
    notice_watch: Watch | None = None
    notice_version: int | None = None
    # A read of every state is scheduled (_FULL_READ_DELAY_S).
    full_read_due: bool = False
    # How many partitions, from 0, have had their first state read: those can be shown.
    ready: int = 0
    info: TopicInfo | None = None

    def cancel(self) -> None:
        for watch in [self.config_watch, self.assignment_watch, self.notice_watch]:
            if watch is not None:
                watch.cancel()
        self.notice_watch = None


def _user_client_path(user_node: str, client_node: str) -> str:
    return f"{znodes.CONFIG_USERS}/{user_node}/{znodes.USER_CLIENTS}/{client_node}"


@dataclass
class _UserNodes:
    """The watches on one ``/config/users/<user>`` node and what is under it."""

    data: Watch | None = None
    children: Watch | None = None
    clients: Watch | None = None  # the children of its ``clients`` node, once that exists
    client_data: dict[str, Watch] = field(default_factory=dict)  # client node name -> its data

    def cancel(self) -> None:
        for watch in [self.data, self.children, self.clients, *self.client_data.values()]:
            if watch is not None:
                watch.cancel()
        self.client_data.clear()


class ClusterMetadata:
    """The cluster as the store last told this broker."""

    def __init__(self, store: MetadataStore, node_id: int, inter_broker_listener: str | None = None) -> None:
        self.store = store
        self.node_id = node_id
        # The listener brokers reach each other on: a broker's host and port are its endpoint there.
        self.inter_broker_listener = inter_broker_listener
        self.cluster_id = ""
        self.brokers: dict[int, BrokerInfo] = {}
        self.controller_id = -1
        self.controller_epoch = 0
        self.topics: dict[str, TopicInfo] = {}
        self.topics_by_id: dict[uuid.UUID, TopicInfo] = {}
        # Dynamic broker configs by resource name: "" is the cluster default, "<id>" one broker.
        self.broker_configs: dict[str, dict[str, str]] = {}
        # Client-metrics subscriptions (KIP-714) by name: their keys as set.
        self.client_metrics: dict[str, dict[str, str]] = {}
        self._client_metrics_watches: dict[str, Watch] = {}  # by node name
        # Per-group configs (config resource GROUP) by group id: their keys as set.
        self.group_configs: dict[str, dict[str, str]] = {}
        self._group_config_watches: dict[str, Watch] = {}  # by node name
        # Each user's configs (``/config/users/<user>``): its SCRAM credentials and quotas.
        self.user_configs: dict[str, dict[str, str]] = {}
        self._user_watches: dict[str, _UserNodes] = {}  # by node name
        self._client_watches: dict[str, Watch] = {}  # by node name
        # Every user and client id quota set, by entity; ``quota_generation`` counts their changes.
        self.client_quotas: dict[QuotaEntity, dict[str, float]] = {}
        self.quota_generation = 0
        self.features = features.FinalizedFeatures()
        self.partition_listeners: list[PartitionListener] = []
        self.topic_removed_listeners: list[TopicListener] = []
        self.topic_configs_listeners: list[TopicListener] = []
        self.broker_configs_listeners: list[Callable[[], None]] = []
        self._events = WatchEvents(self._apply, "metadata change", log)
        self._nursery: trio.Nursery | None = None
        # Topics with a read of every state scheduled: the cache is not settled until they are read.
        self._full_reads_due = 0
        self._post = self._events.post
        self._topic_nodes: dict[str, _TopicNodes] = {}
        self._broker_watches: dict[int, Watch] = {}
        self._broker_config_watches: dict[str, Watch] = {}
        self._watches: list[Watch] = []
        # The version of each config node last applied (-1: absent), for writers waiting on theirs.
        self._config_versions: dict[str, int] = {}

    # -- start-up ---------------------------------------------------------------------------------

    async def start(self, nursery: trio.Nursery, cluster_id: str | None = None) -> None:
        """Make Kafka's top-level nodes if missing, read the cluster id, and load everything.

        ``cluster_id`` (the ``cluster.id`` config) names a new cluster; an existing one keeps its id.
        Returns once every node present at start has been read.
        """
        for path in znodes.PERSISTENT_PATHS:
            if await self.store.get(path) is None:
                try:
                    await self.store.create(path, b"")
                except NodeExistsError:
                    pass  # another broker made it first
        node = await self.store.get(znodes.CLUSTER_ID)
        if node is None:
            try:
                await self.store.create(znodes.CLUSTER_ID, znodes.encode_cluster_id(cluster_id or new_cluster_id()))
            except NodeExistsError:
                pass
            node = await self.store.get(znodes.CLUSTER_ID)
            assert node is not None, "the cluster id node vanished right after it was made"
        self.cluster_id = znodes.decode_cluster_id(node.data)
        self._nursery = nursery
        nursery.start_soon(self._events.run, name="metadata cache")
        store, post = self.store, self._post
        self._watches += [
            await store.watch_children(znodes.BROKER_IDS, lambda kids: post("brokers", kids)),
            await store.watch_data(znodes.CONTROLLER, lambda n: post("controller", n)),
            await store.watch_data(znodes.CONTROLLER_EPOCH, lambda n: post("controller_epoch", n)),
            await store.watch_children(znodes.CONFIG_BROKERS, lambda kids: post("broker_configs", kids)),
            await store.watch_children(znodes.CONFIG_USERS, lambda kids: post("users", kids)),
            await store.watch_children(znodes.CONFIG_CLIENTS, lambda kids: post("clients", kids)),
            await store.watch_children(znodes.CONFIG_CLIENT_METRICS, lambda kids: post("client_metrics", kids)),
            await store.watch_children(znodes.CONFIG_GROUPS, lambda kids: post("group_configs", kids)),
            await store.watch_children(znodes.TOPICS, lambda kids: post("topics", kids)),
            await store.watch_data(features.FEATURE_ZNODE, lambda n: post("features", n)),
        ]
        await self.settled()

    async def settled(self) -> None:
        """Wait until every notification received so far has been applied."""
        await self._events.wait_for(lambda: self._events.pending == 0 and self._full_reads_due == 0)

    async def wait_for(self, predicate: Callable[[], object]) -> None:
        """Wait until ``predicate()`` holds for the cache (checked after each applied change, and
        after each ``wake``)."""
        await self._events.wait_for(predicate)

    def reassigning_topics(self) -> list[TopicInfo]:
        """The shown topics with a partition being reassigned.  The controller's completion check
        runs after every applied change; scanning every partition there made creating N partitions
        cost N x (all partitions)."""
        return [nodes.info for nodes in self._topic_nodes.values()
                if (nodes.adding or nodes.removing) and nodes.info is not None]

    def wake(self) -> None:
        """Check every waiter's condition again: state outside the cache that conditions read changed."""
        self._events.wake()

    def seen(self, path: str, version: int) -> bool:
        """Whether the cache has applied config node ``path`` at ``version`` or later."""
        return self._config_versions.get(path, -1) >= version

    def close(self) -> None:
        for watch in (self._watches + list(self._broker_watches.values()) + list(self._broker_config_watches.values())
                      + list(self._client_watches.values()) + list(self._client_metrics_watches.values())
                      + list(self._group_config_watches.values())):
            watch.cancel()
        for user_nodes in self._user_watches.values():
            user_nodes.cancel()
        for nodes in self._topic_nodes.values():
            nodes.cancel()
        self._events.close()

    # -- applying notifications -------------------------------------------------------------------

    async def _apply(self, event: tuple) -> None:
        kind = event[0]
        if kind == "brokers":
            await self._brokers_changed(event[1] or [])
        elif kind == "broker":
            _, node_id, node = event
            if node is None:
                self.brokers.pop(node_id, None)
            else:
                self.brokers[node_id] = znodes.decode_broker(node_id, node.data, self.inter_broker_listener)
        elif kind == "controller":
            node = event[1]
            self.controller_id = -1 if node is None else znodes.decode_controller(node.data)
        elif kind == "controller_epoch":
            node = event[1]
            self.controller_epoch = int(node.data or b"0") if node is not None else 0
        elif kind == "broker_configs":
            await self._broker_config_entities_changed(event[1] or [])
        elif kind == "client_metrics":
            await self._named_configs_changed(event[1] or [], self._client_metrics_watches, "subscription",
                                              znodes.client_metrics_path)
        elif kind == "subscription":
            self._named_config_changed(self.client_metrics, znodes.client_metrics_path(event[1]), event[1], event[2])
        elif kind == "group_configs":
            await self._named_configs_changed(event[1] or [], self._group_config_watches, "group_config",
                                              znodes.group_config_path)
        elif kind == "group_config":
            self._named_config_changed(self.group_configs, znodes.group_config_path(event[1]), event[1], event[2])
        elif kind == "users":
            await self._users_changed(event[1] or [])
        elif kind == "user":
            self._user_changed(event[1], event[2])
        elif kind == "user_children":
            await self._user_children_changed(event[1], event[2] or [])
        elif kind == "user_clients":
            await self._user_clients_changed(event[1], event[2] or [])
        elif kind == "clients":
            await self._clients_changed(event[1] or [])
        elif kind == "quota":
            _, path, entity, node = event
            self._config_versions[path] = -1 if node is None else node.version
            self._set_quotas(entity, node)
        elif kind == "broker_config":
            _, resource, node = event
            self._config_versions[znodes.broker_config_path(resource)] = -1 if node is None else node.version
            configs = znodes.decode_config(node.data) if node is not None else {}
            if configs != self.broker_configs.get(resource, {}):
                if configs:
                    self.broker_configs[resource] = configs
                else:
                    self.broker_configs.pop(resource, None)
                for listener in self.broker_configs_listeners:
                    listener()
        elif kind == "topics":
            await self._topics_changed(event[1] or [])
        elif kind == "assignment":
            await self._assignment_changed(event[1], event[2], event[3])
        elif kind == "state_notice":
            await self._states_announced(*event[1:])
        elif kind == "full_read":
            await self._full_read(*event[1:])
        elif kind == "topic_config":
            self._topic_config_changed(*event[1:])
        elif kind == "features":
            self.features = features.decode(event[1])

    async def _brokers_changed(self, ids: list[str]) -> None:
        live = {int(i) for i in ids if i.isdigit()}
        for node_id in list(self._broker_watches):
            if node_id not in live:
                self._broker_watches.pop(node_id).cancel()
                self.brokers.pop(node_id, None)
        for node_id in sorted(live - set(self._broker_watches)):
            self._broker_watches[node_id] = await self.store.watch_data(
                znodes.broker_path(node_id), lambda n, i=node_id: self._post("broker", i, n))

    async def _users_changed(self, nodes: list[str]) -> None:
        for name in list(self._user_watches):
            if name not in nodes:
                watches = self._user_watches.pop(name)
                clients = list(watches.client_data)
                watches.cancel()
                self._post("user", name, None)
                user = znodes.entity_name(name)
                for client in clients:
                    self._post("quota", _user_client_path(name, client),
                               QuotaEntity.of(user=user, client_id=znodes.entity_name(client)), None)
        for name in nodes:
            if name not in self._user_watches:
                watches = self._user_watches[name] = _UserNodes()
                path = f"{znodes.CONFIG_USERS}/{name}"
                watches.data = await self.store.watch_data(path, lambda n, u=name: self._post("user", u, n))
                watches.children = await self.store.watch_children(
                    path, lambda kids, u=name: self._post("user_children", u, kids))

    def _user_changed(self, name: str, node: Node | None) -> None:
        user = znodes.entity_name(name)
        path = f"{znodes.CONFIG_USERS}/{name}"
        self._config_versions[path] = -1 if node is None else node.version
        if user is not None:
            if node is None:
                self.user_configs.pop(user, None)
            else:
                self.user_configs[user] = znodes.decode_config(node.data)
        self._set_quotas(QuotaEntity.of(user=user), node)

    async def _user_children_changed(self, name: str, children: list[str]) -> None:
        watches = self._user_watches.get(name)
        if watches is None:
            return
        if znodes.USER_CLIENTS in children and watches.clients is None:
            watches.clients = await self.store.watch_children(
                f"{znodes.CONFIG_USERS}/{name}/{znodes.USER_CLIENTS}",
                lambda kids, u=name: self._post("user_clients", u, kids))
        elif znodes.USER_CLIENTS not in children and watches.clients is not None:
            watches.clients.cancel()
            watches.clients = None
            await self._user_clients_changed(name, [])

    async def _user_clients_changed(self, name: str, clients: list[str]) -> None:
        watches = self._user_watches.get(name)
        if watches is None:
            return  # the user went; its client ids went with it
        known = watches.client_data
        user = znodes.entity_name(name)
        for client in list(known):
            if client not in clients:
                known.pop(client).cancel()
                self._post("quota", _user_client_path(name, client),
                           QuotaEntity.of(user=user, client_id=znodes.entity_name(client)), None)
        for client in clients:
            if client not in known:
                path = _user_client_path(name, client)
                entity = QuotaEntity.of(user=user, client_id=znodes.entity_name(client))
                known[client] = await self.store.watch_data(
                    path, lambda n, p=path, e=entity: self._post("quota", p, e, n))

    async def _clients_changed(self, nodes: list[str]) -> None:
        for name in list(self._client_watches):
            if name not in nodes:
                self._client_watches.pop(name).cancel()
                path = f"{znodes.CONFIG_CLIENTS}/{name}"
                self._post("quota", path, QuotaEntity.of(client_id=znodes.entity_name(name)), None)
        for name in nodes:
            if name not in self._client_watches:
                path = f"{znodes.CONFIG_CLIENTS}/{name}"
                entity = QuotaEntity.of(client_id=znodes.entity_name(name))
                self._client_watches[name] = await self.store.watch_data(
                    path, lambda n, p=path, e=entity: self._post("quota", p, e, n))

    def _set_quotas(self, entity: QuotaEntity, node: Node | None) -> None:
        quotas = parse_quotas(znodes.decode_config(node.data)) if node is not None else {}
        if quotas == self.client_quotas.get(entity, {}):
            return
        if quotas:
            self.client_quotas[entity] = quotas
        else:
            self.client_quotas.pop(entity, None)
        self.quota_generation += 1

    async def _named_configs_changed(self, nodes: list[str], watches: dict[str, Watch], kind: str,
                                     path_of: Callable[[str], str]) -> None:
        """The children of a config root keyed by a name (client-metrics subscriptions, groups) changed:
        watch each new node, and post the removal of each gone one as ``kind``."""
        for node in list(watches):
            if node not in nodes:
                watches.pop(node).cancel()
                self._post(kind, znodes.desanitize(node), None)
        for node in nodes:
            if node not in watches:
                name = znodes.desanitize(node)
                watches[node] = await self.store.watch_data(path_of(name), lambda n, s=name: self._post(kind, s, n))

    def _named_config_changed(self, table: dict[str, dict[str, str]], path: str, name: str,
                              node: Node | None) -> None:
        """One named config node's new content: an empty or gone node drops the name from ``table``."""
        self._config_versions[path] = -1 if node is None else node.version
        configs = znodes.decode_config(node.data) if node is not None else {}
        if configs:
            table[name] = configs
        else:
            table.pop(name, None)

    async def _broker_config_entities_changed(self, entities: list[str]) -> None:
        for entity in list(self._broker_config_watches):
            if entity not in entities:
                self._broker_config_watches.pop(entity).cancel()
                self._post("broker_config", znodes.broker_config_resource(entity), None)
        for entity in entities:
            if entity not in self._broker_config_watches:
                resource = znodes.broker_config_resource(entity)
                self._broker_config_watches[entity] = await self.store.watch_data(
                    znodes.broker_config_path(resource), lambda n, r=resource: self._post("broker_config", r, n))

    async def _topics_changed(self, names: list[str]) -> None:
        wanted = set(names)
        for name in list(self._topic_nodes):
            if name not in wanted:
                self._forget_topic(name)
        for name in names:
            if name not in self._topic_nodes:
                nodes = self._topic_nodes[name] = _TopicNodes()
                # Configs first, as Kafka writes them first: a topic is shown with its configs.
                nodes.config_watch = await self.store.watch_data(
                    znodes.topic_config_path(name), lambda n, t=name: self._post("topic_config", t, n))
                nodes.assignment_watch = await self.store.watch_data(
                    znodes.topic_path(name), lambda n, t=name, ns=nodes: self._post("assignment", t, ns, n))

    def _forget_topic(self, name: str) -> None:
        nodes = self._topic_nodes.pop(name)
        nodes.cancel()
        self._config_versions.pop(znodes.topic_config_path(name), None)
        if nodes.info is not None:
            self._unpublish(nodes.info)

    def _unpublish(self, info: TopicInfo) -> None:
        if self.topics.get(info.name) is info:
            del self.topics[info.name]
        if self.topics_by_id.get(info.topic_id) is info:
            del self.topics_by_id[info.topic_id]
        for listener in self.topic_removed_listeners:
            listener(info)

    async def _assignment_changed(self, name: str, nodes: _TopicNodes, node: Node | None) -> None:
        if self._topic_nodes.get(name) is not nodes or node is None:
            return  # the topic is gone (or going): the children watch removes it
        assignment = znodes.decode_assignment(node.data)
        topic_id, replicas = assignment.topic_id, assignment.replicas
        if nodes.topic_id is not None and topic_id != nodes.topic_id:
            # Deleted and created again between two notifications: the old topic goes first.
            if nodes.notice_watch is not None:
                nodes.notice_watch.cancel()
                nodes.notice_watch = None
            nodes.notice_version = None
            nodes.states.clear()
            nodes.ready = 0
            if nodes.info is not None:
                self._unpublish(nodes.info)
                nodes.info = None
        nodes.topic_id = topic_id or uuid.uuid5(uuid.NAMESPACE_URL, name)
        nodes.replicas = replicas
        nodes.adding, nodes.removing = assignment.adding, assignment.removing
        if nodes.notice_watch is None:
            # Its first report reads every partition's state.
            nodes.notice_watch = await self.store.watch_data(
                znodes.partitions_path(name), lambda n, t=name, ns=nodes: self._post("state_notice", t, ns, n))
        else:
            await self._read_states(name, nodes, [i for i in range(len(replicas)) if i not in nodes.states])
        self._publish(name, nodes, range(len(replicas)))

    async def _states_announced(self, name: str, nodes: _TopicNodes, node: Node | None) -> None:
        """The topic's partitions node changed: take the states it carries, or read all of them if
        a write may have been missed since the version last seen."""
        if self._topic_nodes.get(name) is not nodes or node is None:
            return  # the topic is going: the children watch removes it
        written = znodes.decode_state_notice(node.data)
        previous, nodes.notice_version = nodes.notice_version, node.version
        if previous is None and node.version == 0 and written is not None:
            # The node as the topic's creation wrote it: no state was written since (each write
            # rewrites this node), so the states it was created with are the state nodes' own.
            # Partitions added after the creation are read.
            count = len(nodes.replicas)
            self._apply_states(name, nodes, {i: s for i, s in written.items() if i < count})
            await self._read_states(name, nodes, [i for i in range(count) if i not in written])
        elif previous is None:
            await self._read_states(name, nodes, list(range(len(nodes.replicas))))
        elif written is not None and node.version == previous + 1:
            if nodes.full_read_due:
                return  # that read, later than this write, shows it
            known = {i: s for i, s in written.items() if 0 <= i < len(nodes.replicas)}
            self._apply_states(name, nodes, {i: s for i, s in known.items() if s[1] >= 0})
            await self._read_states(name, nodes, [i for i, s in known.items() if s[1] < 0])
        elif not nodes.full_read_due and self._nursery is not None:
            nodes.full_read_due = True
            self._full_reads_due += 1
            self._nursery.start_soon(self._full_read_later, name, nodes)

    async def _full_read_later(self, name: str, nodes: _TopicNodes) -> None:
        await trio.sleep(_FULL_READ_DELAY_S)
        self._post("full_read", name, nodes)

    async def _full_read(self, name: str, nodes: _TopicNodes) -> None:
        nodes.full_read_due = False
        self._full_reads_due -= 1
        if self._topic_nodes.get(name) is nodes:
            await self._read_states(name, nodes, list(range(len(nodes.replicas))))

    async def _read_states(self, name: str, nodes: _TopicNodes, indexes: list[int]) -> None:
        if not indexes:
            return
        read = await self.store.read_many([znodes.partition_state_path(name, index) for index in indexes])
        if self._topic_nodes.get(name) is not nodes:
            return
        states: dict[int, tuple[PartitionState | None, int]] = {}
        for index, node in zip(indexes, read, strict=True):
            if node is None:
                states[index] = (None, -1)
                continue
            known = nodes.states.get(index)
            if known is not None and known[1] >= node.version:
                continue  # not decoded again
            try:
                states[index] = (znodes.decode_partition_state(node.data), node.version)
            except (ValueError, KeyError, TypeError) as e:
                log.error("partition %s-%d: unreadable state node (%s); keeping what was read before", name, index, e)
        self._apply_states(name, nodes, states)

    def _apply_states(self, name: str, nodes: _TopicNodes, states: dict[int, tuple[PartitionState | None, int]]
                      ) -> None:
        """Keep each state newer than the one held and show what changed."""
        changed = []
        for index, (state, version) in states.items():
            known = nodes.states.get(index)
            if known is not None and (state is None or known[1] >= version):
                # Already held at this version or a later one; or gone, which a state node is only
                # with its topic, whose removal follows: nothing to show meanwhile.
                continue
            nodes.states[index] = (state, version)
            changed.append(index)
        self._publish(name, nodes, changed)

    def _topic_config_changed(self, name: str, node: Node | None) -> None:
        nodes = self._topic_nodes.get(name)
        if nodes is None:
            return
        self._config_versions[znodes.topic_config_path(name)] = -1 if node is None else node.version
        nodes.configs = znodes.decode_config(node.data) if node is not None else {}
        if nodes.info is not None and nodes.info.configs != nodes.configs:
            nodes.info.configs = dict(nodes.configs)
            for listener in self.topic_configs_listeners:
                listener(nodes.info)
        else:
            self._publish(name, nodes, ())

    def _publish(self, name: str, nodes: _TopicNodes, indexes: Iterable[int]) -> None:
        """Show what is complete of the topic: new partitions once their states are read, and the
        partitions ``indexes`` whose assignment or state changed."""
        if nodes.topic_id is None or nodes.configs is None:
            return
        while nodes.ready < len(nodes.replicas) and nodes.ready in nodes.states:
            nodes.ready += 1
        info = nodes.info
        if info is None:
            if nodes.ready < len(nodes.replicas):
                return
            info = nodes.info = TopicInfo(name, nodes.topic_id, [], dict(nodes.configs),
                                          internal=name in INTERNAL_TOPICS)
            self.topics[name] = info
            self.topics_by_id[info.topic_id] = info
        shown = len(info.partitions)
        wanted = sorted({i for i in indexes if i < shown} | set(range(shown, nodes.ready)))
        changed: list[PartitionInfo] = []
        for index in wanted:
            state, version = nodes.states[index]
            new = PartitionInfo(
                index=index,
                leader=-1 if state is None else state.leader,
                leader_epoch=-1 if state is None else state.leader_epoch,
                replicas=list(nodes.replicas[index]),
                isr=[] if state is None else list(state.isr),
                controller_epoch=0 if state is None else state.controller_epoch,
                state_version=version,
                adding_replicas=list(nodes.adding.get(index, ())),
                removing_replicas=list(nodes.removing.get(index, ())),
            )
            if index >= len(info.partitions):
                info.partitions.append(new)
                changed.append(new)
            elif info.partitions[index] != new:
                current = info.partitions[index]
                current.__dict__.update(new.__dict__)
                changed.append(current)
        if changed:
            for listener in self.partition_listeners:
                listener(info, changed)
