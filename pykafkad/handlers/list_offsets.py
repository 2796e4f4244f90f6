"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp offset lookups, on the leader;
read_committed (v2+) answers below the last stable offset instead of the high watermark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

UNKNOWN = -1


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for wanted in body["topics"]:
        name = wanted["name"]
        results = []
        described = allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, name)
        for part in wanted["partitions"]:
            index = part["partition_index"]
            try:
                if not described:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                partition = broker.replicas.leader(name, index, part["current_leader_epoch"])
                found = partition.fetch_offset_for_timestamp(part["timestamp"], from_client=body["replica_id"] < 0,
                                                             read_committed=body.get("isolation_level", 0) == 1)
                if found is None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST)
            except KafkaError as e:
                results.append({"partition_index": index, "error_code": e.code, "timestamp": UNKNOWN,
                                "offset": UNKNOWN, "leader_epoch": -1})
                continue
            offset, timestamp = found
            results.append({"partition_index": index, "error_code": ErrorCode.NONE, "timestamp": timestamp,
                            "offset": offset, "leader_epoch": partition.leader_epoch})
        topics.append({"name": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(2, "ListOffsets", 1, 8, handle)]
