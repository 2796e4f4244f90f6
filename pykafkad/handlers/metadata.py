"""Metadata (key 3): brokers, controller, topics with their ids, partitions, leaders and epochs.

Unknown topics are created here when auto.create.topics.enable allows it and the client
asks for it (``allow_auto_topic_creation``, v4+; always for older versions).  As in Kafka, the
request that creates a topic is answered UNKNOWN_TOPIC_OR_PARTITION; the next one shows it.
"""

from __future__ import annotations

import uuid
from collections.abc import Container
from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.offsets_store import OFFSETS_TOPIC
from pykafkad.coordinator.transaction.transaction_log import TRANSACTION_TOPIC
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import CLUSTER_NAME, Operation, ResourceType, allowed, cluster_allowed, operations
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.metadata.cluster_metadata import PartitionInfo, TopicInfo
from pykafkad.metadata.model import INTERNAL_TOPICS
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
ZERO_UUID = uuid.UUID(int=0)


def offline_replicas(broker: Broker, topic: str, p: PartitionInfo, live: Container[int]) -> list[int]:
    """Replicas on brokers that are down or in a failed log dir of their broker, as Kafka lists them."""
    offline = broker.leadership.offline
    # Almost always no broker reports a failed dir: then only the dead brokers' replicas are offline.
    on_failed_dirs = offline.brokers(topic, p.index) if offline.any() else frozenset()
    return [r for r in p.replicas if r not in live or r in on_failed_dirs]


def _partition_entry(broker: Broker, topic: str, p: PartitionInfo, live: Container[int]) -> dict[str, Any]:
    # No leader elected, or its broker is down: retriable, as Kafka answers (leader -1).
    led = p.leader in live
    return {
        "error_code": ErrorCode.NONE if led else ErrorCode.LEADER_NOT_AVAILABLE,
        "partition_index": p.index,
        "leader_id": p.leader if led else -1,
        "leader_epoch": p.leader_epoch,
        "replica_nodes": p.replicas,
        "isr_nodes": p.isr,
        "offline_replicas": offline_replicas(broker, topic, p, live),
    }


def _topic_entry(broker: Broker, topic: TopicInfo, live: Container[int], authorized_operations: int) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": [_partition_entry(broker, topic.name, p, live) for p in topic.partitions],
        "topic_authorized_operations": authorized_operations,
    }


def _error_entry(name: str | None, code: ErrorCode, topic_id: uuid.UUID = ZERO_UUID,
                 internal: bool = False) -> dict[str, Any]:
    return {"error_code": code, "name": name, "topic_id": topic_id, "is_internal": internal, "partitions": [],
            "topic_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}


async def _auto_create(broker: Broker, name: str) -> None:
    """Create ``name`` for a Metadata request, or raise KafkaError.  The coordinators' topics get
    their own partition counts and configs, as Kafka creates them; a creation already under way
    is no error (the client asks again)."""
    try:
        if name == OFFSETS_TOPIC:
            await broker.groups.create_offsets_topic()
        elif name == TRANSACTION_TOPIC:
            await broker.transactions.create_topic()
        else:
            await broker.controller.maybe_auto_create(name)
    except KafkaError as e:
        if e.code != ErrorCode.TOPIC_ALREADY_EXISTS:
            raise


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    requested = body["topics"]
    # v0 asks for every topic with an empty list; later versions with null.
    all_topics = requested is None or (ctx.api_version == 0 and not requested)
    allow_create = body["allow_auto_topic_creation"] if ctx.api_version >= 4 else True
    live = broker.metadata.brokers
    with_operations = body.get("include_topic_authorized_operations", False)

    def described(name: str, log_denial: bool = True) -> bool:
        return allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, name, log_denial)

    def entry(topic: TopicInfo) -> dict[str, Any]:
        allowed_ops = operations(broker, ctx, ResourceType.TOPIC, topic.name, with_operations)
        return _topic_entry(broker, topic, live, allowed_ops)

    topics: list[dict[str, Any]] = []
    if all_topics:
        # Topics the principal may not describe are left out, as Kafka leaves them out.
        topics = [entry(t) for t in sorted(broker.metadata.topics.values(), key=lambda t: t.name)
                  if described(t.name, log_denial=False)]
    else:
        for wanted in requested:
            name, topic_id = wanted["name"], wanted["topic_id"]
            # A topic named by id is looked up by id whatever its name says: Kafka 4.4's consumer
            # asks for the topics of its assignment with an empty name, not a null one.
            if name is None or (topic_id is not None and topic_id != ZERO_UUID):
                topic = broker.metadata.topics_by_id.get(topic_id)
                if topic is not None and not described(topic.name):
                    topics.append(_error_entry(None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, topic_id))
                    continue
                topics.append(entry(topic) if topic else
                              _error_entry(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id))
                continue
            if not described(name):
                topics.append(_error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            topic = broker.topic(name)
            if topic is None and allow_create and broker.config["auto.create.topics.enable"] and not (
                    cluster_allowed(broker, ctx, Operation.CREATE)
                    or allowed(broker, ctx, Operation.CREATE, ResourceType.TOPIC, name)):
                topics.append(_error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            if topic is None and allow_create and broker.config["auto.create.topics.enable"]:
                try:
                    await _auto_create(broker, name)
                except KafkaError as e:
                    topics.append(_error_entry(name, e.code))
                    continue
                # Kafka asks its controller to create the topic and answers this request without
                # it (AutoTopicCreationManager): the client asks again and then finds it.  Answering
                # with the new topic made a topic just deleted look as if it had never gone.
                topics.append(_error_entry(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                           internal=name in INTERNAL_TOPICS))
                continue
            if topic is not None:
                topics.append(entry(topic))
            elif broker.controller.is_being_created(name):
                # Its logs are still being created: retriable, as Kafka answers for a new topic.
                topics.append(_error_entry(name, ErrorCode.LEADER_NOT_AVAILABLE))
            else:
                topics.append(_error_entry(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    md = broker.metadata
    return {
        "throttle_time_ms": 0,
        # Each broker's endpoint on the listener this request came in on; a broker without that
        # listener is left out, as Kafka does.
        "brokers": [{"node_id": b.node_id, "host": e[0], "port": e[1], "rack": b.rack}
                    for b in md.brokers.values() if (e := b.endpoint(ctx.listener)) is not None],
        "cluster_id": md.cluster_id,
        "controller_id": md.controller_id,
        "topics": topics,
        "cluster_authorized_operations": operations(broker, ctx, ResourceType.CLUSTER, CLUSTER_NAME,
                                                    body.get("include_cluster_authorized_operations", False)),
        "error_code": ErrorCode.NONE,
    }


APIS = [Api(3, "Metadata", 0, 13, handle)]
