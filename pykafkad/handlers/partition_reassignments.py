"""AlterPartitionReassignments (key 45) and ListPartitionReassignments (key 46): moving replicas
between brokers, as ``kafka-reassign-partitions.sh`` and ``Admin.alterPartitionReassignments``
ask for it (KIP-455; v1's ``allow_replication_factor_change`` is KIP-860).  The work is the
controller's (``controller/reassignment.py``); any broker takes the request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def alter(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    allow_rf_change = body.get("allow_replication_factor_change", True) if ctx.api_version >= 1 else True
    if not cluster_allowed(broker, ctx, Operation.ALTER):
        return {"throttle_time_ms": 0, "allow_replication_factor_change": allow_rf_change,
                "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None, "responses": []}
    wanted = {(t["name"], p["partition_index"]): p["replicas"] for t in body["topics"] for p in t["partitions"]}
    outcomes = await broker.reassignments.alter(wanted, allow_rf_change)
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), (code, message) in outcomes.items():
        by_topic.setdefault(topic, []).append({"partition_index": index, "error_code": code,
                                               "error_message": message})
    return {"throttle_time_ms": 0, "allow_replication_factor_change": allow_rf_change,
            "error_code": ErrorCode.NONE, "error_message": None,
            "responses": [{"name": t, "partitions": p} for t, p in by_topic.items()]}


async def list_ongoing(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not cluster_allowed(broker, ctx, Operation.DESCRIBE):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                "topics": []}
    topics = body["topics"]
    wanted = None if topics is None else [(t["name"], i) for t in topics for i in t["partition_indexes"]]
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for r in broker.reassignments.ongoing(wanted):
        by_topic.setdefault(r.topic, []).append({"partition_index": r.partition, "replicas": r.replicas,
                                                 "adding_replicas": r.adding, "removing_replicas": r.removing})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]}


APIS = [
    Api(45, "AlterPartitionReassignments", 0, 1, alter),
    Api(46, "ListPartitionReassignments", 0, 0, list_ongoing),
]
