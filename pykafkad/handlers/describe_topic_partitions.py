"""DescribeTopicPartitions (key 75, KIP-966): topics with their partitions, a page at a time, as
Kafka 4's ``kafka-topics.sh --describe`` asks for them.

Topics come sorted by name (every topic the principal may describe when none are named); at most
``response_partition_limit`` partitions per answer (capped by ``max.request.partition.size.limit``),
and ``next_cursor`` says where the next page starts.  A named topic that does not exist answers
UNKNOWN_TOPIC_OR_PARTITION; one the principal may not describe, TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, ResourceType, allowed, operations
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.metadata import offline_replicas
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

ZERO_UUID = uuid.UUID(int=0)


def _error_topic(name: str, code: ErrorCode) -> dict[str, Any]:
    return {"error_code": code, "name": name, "topic_id": ZERO_UUID, "is_internal": False, "partitions": [],
            "topic_authorized_operations": -2147483648}


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    named = [t["name"] for t in body["topics"]]
    every = not named
    cursor = body.get("cursor")
    if cursor is not None and not every and cursor["topic_name"] not in named:
        # Kafka refuses a cursor outside the named topics: every topic of the request gets INVALID_REQUEST.
        return {"throttle_time_ms": 0, "topics": [_error_topic(n, ErrorCode.INVALID_REQUEST) for n in named],
                "next_cursor": None}
    names = sorted(broker.metadata.topics) if every else sorted(set(named))
    if cursor is not None:
        names = [n for n in names if n >= cursor["topic_name"]]
    limit = max(1, min(body["response_partition_limit"], broker.config["max.request.partition.size.limit"]))
    live = broker.metadata.brokers
    topics: list[dict[str, Any]] = []
    next_cursor = None
    for name in names:
        if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, name, log_denial=not every):
            if not every:
                topics.append(_error_topic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            continue
        topic = broker.topic(name)
        if topic is None:
            if not every:
                topics.append(_error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        first = cursor["partition_index"] if cursor is not None and name == cursor["topic_name"] else 0
        if limit == 0:
            next_cursor = {"topic_name": name, "partition_index": first}
            break
        chosen = topic.partitions[first:first + limit]
        limit -= len(chosen)
        topics.append({
            "error_code": ErrorCode.NONE, "name": name, "topic_id": topic.topic_id, "is_internal": topic.internal,
            "partitions": [{"error_code": ErrorCode.NONE if p.leader in live else ErrorCode.LEADER_NOT_AVAILABLE,
                            "partition_index": p.index, "leader_id": p.leader if p.leader in live else -1,
                            "leader_epoch": p.leader_epoch, "replica_nodes": p.replicas, "isr_nodes": p.isr,
                            "eligible_leader_replicas": [], "last_known_elr": [],
                            "offline_replicas": offline_replicas(broker, name, p, live)} for p in chosen],
            "topic_authorized_operations": operations(broker, ctx, ResourceType.TOPIC, name)})
        if first + len(chosen) < len(topic.partitions):
            next_cursor = {"topic_name": name, "partition_index": first + len(chosen)}
            break
    return {"throttle_time_ms": 0, "topics": topics, "next_cursor": next_cursor}


APIS = [Api(75, "DescribeTopicPartitions", 0, 0, handle)]
