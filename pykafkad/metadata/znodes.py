"""Kafka's ZooKeeper layout: the paths of the cluster's nodes and the JSON each holds.

The same layout serves both store engines, so an operator's ``zkCli.sh get
/brokers/topics/T/partitions/0/state`` shows what Kafka would show, and a single broker's file
holds the same documents.  The JSON follows Kafka's ZkData (``BrokerIdZNode`` version 5,
``TopicZNode`` version 3, ``TopicPartitionStateZNode`` version 1, ``ConfigEntityZNode``,
``ControllerZNode``, ``ClusterIdZNode``, ``ProducerIdBlockZNode``).  Users and client ids are
node names as Kafka's ``Sanitizer`` makes them, ``<default>`` for a default quota entity.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
import uuid
from dataclasses import dataclass, field

from pykafkad.metadata.model import BrokerInfo

BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CONFIG_USERS = "/config/users"
CONFIG_CLIENTS = "/config/clients"
CONFIG_CLIENT_METRICS = "/config/client-metrics"
CONFIG_GROUPS = "/config/groups"
DELETE_TOPICS = "/admin/delete_topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CLUSTER_ID = "/cluster/id"
PRODUCER_ID_BLOCK = "/latest_producer_id_block"

# Created at start when missing, as Kafka's broker does, so watches on them always have a node.
PERSISTENT_PATHS = (BROKER_IDS, TOPICS, CONFIG_TOPICS, CONFIG_BROKERS, CONFIG_USERS, CONFIG_CLIENTS,
                    CONFIG_CLIENT_METRICS, CONFIG_GROUPS, DELETE_TOPICS, "/config/changes", "/isr_change_notification")

# Kafka's ConfigEntityName.DEFAULT: the node of a default entity (the cluster-wide broker config
# resource "", the default user or client id of a quota).  Real names are sanitized, so none is it.
DEFAULT_ENTITY = "<default>"
DEFAULT_BROKER_ENTITY = DEFAULT_ENTITY
# The child of a user's node that holds its per-client-id quota nodes.
USER_CLIENTS = "clients"


def broker_path(node_id: int) -> str:
    return f"{BROKER_IDS}/{node_id}"


def topic_path(name: str) -> str:
    return f"{TOPICS}/{name}"


def partitions_path(name: str) -> str:
    return f"{TOPICS}/{name}/partitions"


def partition_path(name: str, partition: int) -> str:
    return f"{TOPICS}/{name}/partitions/{partition}"


def partition_state_path(name: str, partition: int) -> str:
    return f"{TOPICS}/{name}/partitions/{partition}/state"


def topic_config_path(name: str) -> str:
    return f"{CONFIG_TOPICS}/{name}"


def broker_config_path(resource: str) -> str:
    return f"{CONFIG_BROKERS}/{resource or DEFAULT_BROKER_ENTITY}"


def sanitize(name: str) -> str:
    """Kafka's ``Sanitizer.sanitize``: a user or client id as a node name (Java's URL encoding, with
    ``*`` and space percent-encoded too), so ``/`` and the like cannot break the path."""
    return urllib.parse.quote(name, safe="").replace("~", "%7E")


def desanitize(node: str) -> str:
    return urllib.parse.unquote(node)


def entity_node(name: str | None) -> str:
    """The node name of a quota entity's user or client id: None is the default entity."""
    return DEFAULT_ENTITY if name is None else sanitize(name)


def entity_name(node: str) -> str | None:
    return None if node == DEFAULT_ENTITY else desanitize(node)


def client_metrics_path(subscription: str) -> str:
    """A client-metrics subscription's keys (``interval.ms``, ``match``, ``metrics``); its name may
    hold any character, so the node's is sanitized as a quota entity's."""
    return f"{CONFIG_CLIENT_METRICS}/{sanitize(subscription)}"


def group_config_path(group: str) -> str:
    """A group's configs (``consumer.session.timeout.ms``...); a group id may hold any character, so
    the node's name is sanitized as a quota entity's."""
    return f"{CONFIG_GROUPS}/{sanitize(group)}"


def user_config_path(user: str | None) -> str:
    """A user's configs: its SCRAM credentials (``SCRAM-SHA-256`` -> ``salt=...,stored_key=...``)
    and its quotas (``producer_byte_rate``...); None is the default user's quotas."""
    return f"{CONFIG_USERS}/{entity_node(user)}"


def user_clients_path(user: str | None) -> str:
    return f"{user_config_path(user)}/{USER_CLIENTS}"


def user_client_config_path(user: str | None, client_id: str | None) -> str:
    """The quotas of a client id of a user (either may be None, the default)."""
    return f"{user_clients_path(user)}/{entity_node(client_id)}"


def client_config_path(client_id: str | None) -> str:
    """The quotas of a client id (None: the default client id)."""
    return f"{CONFIG_CLIENTS}/{entity_node(client_id)}"


def broker_config_resource(entity: str) -> str:
    """The DescribeConfigs resource name of a ``/config/brokers`` child."""
    return "" if entity == DEFAULT_BROKER_ENTITY else entity


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


# -- /brokers/ids/<id> ----------------------------------------------------------------------------

def encode_broker(broker: BrokerInfo, timestamp_ms: int) -> bytes:
    endpoints = broker.endpoints or {"PLAINTEXT": (broker.host, broker.port)}
    protocols = broker.protocols or {name: name for name in endpoints}
    return _json({
        "features": {},
        "listener_security_protocol_map": protocols,
        "endpoints": [f"{name}://{_host(host)}:{port}" for name, (host, port) in endpoints.items()],
        "rack": broker.rack,
        "jmx_port": -1,
        "port": broker.port,
        "host": broker.host,
        "version": 5,
        "timestamp": str(timestamp_ms),
    })


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def decode_broker(node_id: int, data: bytes, inter_broker_listener: str | None = None) -> BrokerInfo:
    """The broker a registration describes; its host and port are those of
    ``inter_broker_listener`` (else of its first endpoint)."""
    doc = json.loads(data)
    endpoints: dict[str, tuple[str, int]] = {}
    for endpoint in doc.get("endpoints", []):
        # NAME://host:port; a bracketed IPv6 host keeps its colons.
        name, _, address = endpoint.partition("://")
        host, _, port_text = address.rpartition(":")
        endpoints[name] = (host.strip("[]"), int(port_text))
    host, port = doc.get("host") or "", int(doc.get("port", -1))
    chosen = endpoints.get(inter_broker_listener or "") or next(iter(endpoints.values()), None)
    if chosen is not None:
        host, port = chosen
    protocols = {str(k): str(v) for k, v in (doc.get("listener_security_protocol_map") or {}).items()}
    return BrokerInfo(node_id, host, port, doc.get("rack"), endpoints, protocols)


# -- /brokers/topics/<t> --------------------------------------------------------------------------

@dataclass
class Assignment:
    """A topic's ``/brokers/topics/<t>`` node: its id, each partition's replicas and, for the
    partitions being reassigned (KIP-455), the replicas being added and removed.  While a
    reassignment runs, a partition's replicas are the full set: the target replicas first, then
    the old ones that are leaving."""

    topic_id: uuid.UUID | None
    replicas: list[list[int]]
    adding: dict[int, list[int]] = field(default_factory=dict)
    removing: dict[int, list[int]] = field(default_factory=dict)


def encode_assignment(topic_id: uuid.UUID | None, replicas: list[list[int]],
                      adding: dict[int, list[int]] | None = None,
                      removing: dict[int, list[int]] | None = None) -> bytes:
    doc: dict[str, object] = {"version": 3}
    if topic_id is not None:
        doc["topic_id"] = kafka_uuid(topic_id)
    doc["partitions"] = {str(i): r for i, r in enumerate(replicas)}
    doc["adding_replicas"] = {str(p): r for p, r in sorted((adding or {}).items()) if r}
    doc["removing_replicas"] = {str(p): r for p, r in sorted((removing or {}).items()) if r}
    return _json(doc)


def encode(assignment: Assignment) -> bytes:
    return encode_assignment(assignment.topic_id, assignment.replicas, assignment.adding, assignment.removing)


def decode_assignment(data: bytes) -> Assignment:
    doc = json.loads(data)
    partitions = {int(p): list(r) for p, r in doc.get("partitions", {}).items()}
    topic_id = doc.get("topic_id")
    return Assignment(
        parse_kafka_uuid(topic_id) if topic_id else None,
        [partitions[p] for p in sorted(partitions)],
        {int(p): list(r) for p, r in (doc.get("adding_replicas") or {}).items() if r},
        {int(p): list(r) for p, r in (doc.get("removing_replicas") or {}).items() if r},
    )


# -- /brokers/topics/<t>/partitions/<p>/state -----------------------------------------------------

@dataclass(frozen=True)
class PartitionState:
    leader: int
    leader_epoch: int
    isr: list[int]
    controller_epoch: int


def _partition_state_doc(state: PartitionState) -> dict[str, object]:
    return {"controller_epoch": state.controller_epoch, "leader": state.leader, "version": 1,
            "leader_epoch": state.leader_epoch, "isr": state.isr}


def _partition_state_of(doc: dict) -> PartitionState:
    return PartitionState(int(doc["leader"]), int(doc["leader_epoch"]), [int(r) for r in doc["isr"]],
                          int(doc.get("controller_epoch", 0)))


def encode_partition_state(state: PartitionState) -> bytes:
    return _json(_partition_state_doc(state))


def decode_partition_state(data: bytes) -> PartitionState:
    return _partition_state_of(json.loads(data))


# -- /brokers/topics/<t>/partitions: the partition states the last write changed -----------------

def encode_state_notice(states: dict[int, tuple[PartitionState, int]]) -> bytes:
    """What a state write puts in its topic's ``partitions`` node (empty in Kafka's layout): each
    state it wrote, with the version the write gives its node (-1: not known, the write was not
    conditional).  Every broker's cache watches this node instead of each state node, and takes
    the states from it without reading them again."""
    return _json({"version": 1, "partitions": [
        {"partition": index, **_partition_state_doc(state), "state_version": version + 1 if version >= 0 else -1}
        for index, (state, version) in sorted(states.items())]})


def encode_created_notice(controller_epoch: int, replicas: list[list[int]]) -> bytes:
    """What a new topic's ``partitions`` node holds: the state each partition is created with
    (led by its first replica, in epoch 0, every replica in sync), in a few bytes per partition so
    that a topic of thousands still fits one request.  At the node's first version it is what the
    state nodes hold, and a cache takes it without reading them."""
    return _json({"version": 1, "created": {"controller_epoch": controller_epoch, "isr": replicas}})


def decode_state_notice(data: bytes) -> dict[int, tuple[PartitionState, int]] | None:
    """The states the last write changed (or, for a topic's creation notice, the states it was
    created with), each with its node's version then (-1: read the node); or None when the node
    does not say (a topic created in several commits, or a node written by other software): then a
    reader must read every state."""
    if not data:
        return None
    try:
        doc = json.loads(data)
        created = doc.get("created")
        if created is not None:
            epoch = int(created["controller_epoch"])
            return {index: (PartitionState(int(isr[0]), 0, [int(r) for r in isr], epoch), 0)
                    for index, isr in enumerate(created["isr"])}
        return {int(p["partition"]): (_partition_state_of(p), int(p["state_version"]))
                for p in doc["partitions"]}
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


# -- /config/topics/<t>, /config/brokers/<id> -------------------------------------------------------

def encode_config(configs: dict[str, str]) -> bytes:
    return _json({"version": 1, "config": configs})


def decode_config(data: bytes) -> dict[str, str]:
    return {k: str(v) for k, v in json.loads(data).get("config", {}).items()} if data else {}


# -- /controller, /controller_epoch, /cluster/id, /latest_producer_id_block -----------------------

def encode_controller(node_id: int, timestamp_ms: int) -> bytes:
    return _json({"version": 1, "brokerid": node_id, "timestamp": str(timestamp_ms)})


def decode_controller(data: bytes) -> int:
    return int(json.loads(data)["brokerid"])


def encode_cluster_id(cluster_id: str) -> bytes:
    return _json({"version": "1", "id": cluster_id})


def decode_cluster_id(data: bytes) -> str:
    return str(json.loads(data)["id"])


def encode_producer_id_block(broker_id: int, first: int, last: int) -> bytes:
    return _json({"version": 1, "broker": broker_id, "block_start": str(first), "block_end": str(last)})


def decode_producer_id_block(data: bytes) -> tuple[int, int]:
    """(first, last) of the block handed out most recently."""
    doc = json.loads(data)
    return int(doc["block_start"]), int(doc["block_end"])
