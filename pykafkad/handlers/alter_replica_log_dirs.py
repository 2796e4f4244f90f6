"""AlterReplicaLogDirs (key 34): move replicas of this broker to another of its log dirs, as
``kafka-reassign-partitions`` asks for with ``log_dirs`` in its plan.  Kafka's answers: a path that
is not one of ``log.dirs`` gets LOG_DIR_NOT_FOUND, a replica this broker does not hold
REPLICA_NOT_AVAILABLE (UNKNOWN_TOPIC_OR_PARTITION for an unknown topic); the move runs after the
answer, and DescribeLogDirs shows it (``is_future_key``) until it is done."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    configured = {d.resolve(): d for d in broker.config.log_dirs}
    by_topic: dict[str, list[dict[str, Any]]] = {}
    permitted = cluster_allowed(broker, ctx, Operation.ALTER)
    for entry in body["dirs"]:
        path = Path(entry["path"])
        dest = configured.get(path.resolve()) if path.is_absolute() else None
        for topic in entry["topics"]:
            for index in topic["partitions"]:
                code = (ErrorCode.CLUSTER_AUTHORIZATION_FAILED if not permitted else
                        ErrorCode.LOG_DIR_NOT_FOUND if dest is None else
                        broker.replicas.move_replica(topic["name"], index, dest))
                by_topic.setdefault(topic["name"], []).append({"partition_index": index, "error_code": code})
    return {"throttle_time_ms": 0,
            "results": [{"topic_name": t, "partitions": p} for t, p in by_topic.items()]}


APIS = [Api(34, "AlterReplicaLogDirs", 1, 2, handle)]
