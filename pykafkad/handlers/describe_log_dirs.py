"""DescribeLogDirs (key 35): each log dir with the size of every partition in it.

A log dir whose last write failed (a full disk, an I/O error) is answered as Kafka answers an offline
one: KAFKA_STORAGE_ERROR, no partitions, and unknown (-1) total and usable bytes; ``kafka-log-dirs``
shows it with a ``KafkaStorageException``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

# Kafka's DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES.
UNKNOWN_VOLUME_BYTES = -1


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not cluster_allowed(broker, ctx, Operation.DESCRIBE):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "results": []}
    wanted: dict[str, set[int] | None] | None = None
    if body["topics"] is not None:
        wanted = {t["topic"]: set(t["partitions"]) for t in body["topics"]}
    results = []
    failed = broker.logs.dir_failures.failed()
    for log_dir in broker.config.log_dirs:
        if log_dir in failed:
            results.append({"error_code": ErrorCode.KAFKA_STORAGE_ERROR, "log_dir": str(log_dir.resolve()),
                            "topics": [], "total_bytes": UNKNOWN_VOLUME_BYTES,
                            "usable_bytes": UNKNOWN_VOLUME_BYTES})
            continue
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for replica in sorted(broker.replicas.partitions(), key=lambda r: (r.topic, r.index)):
            topic, partition = replica.topic, replica.index
            if wanted is not None and (topic not in wanted or partition not in wanted[topic]):
                continue
            moving_to = broker.replicas.moving_to(topic, partition)
            if moving_to is not None and moving_to == log_dir:
                # The copy being made here (Kafka's future replica): behind by the whole log until done.
                by_topic.setdefault(topic, []).append({
                    "partition_index": partition, "partition_size": 0, "offset_lag": replica.log_end_offset,
                    "is_future_key": True})
            if Path(replica.log.dir).parent != log_dir:
                continue
            by_topic.setdefault(topic, []).append({
                "partition_index": partition, "partition_size": replica.log.size_bytes(),
                "offset_lag": max(0, replica.high_watermark - replica.log_end_offset), "is_future_key": False})
        usage = shutil.disk_usage(log_dir)
        results.append({
            "error_code": ErrorCode.NONE, "log_dir": str(log_dir.resolve()),
            "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()],
            "total_bytes": usage.total, "usable_bytes": usage.free,
        })
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results": results}


APIS = [Api(35, "DescribeLogDirs", 1, 5, handle)]
