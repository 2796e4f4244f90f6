"""DeleteRecords (key 21): move a partition's log start offset forward on demand, on the leader."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad._rust_log import LogError
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for wanted in body["topics"]:
        name = wanted["name"]
        results = []
        permitted = allowed(broker, ctx, Operation.DELETE, ResourceType.TOPIC, name)
        for part in wanted["partitions"]:
            index = part["partition_index"]
            try:
                if not permitted:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                low = broker.replicas.leader(name, index).delete_records(part["offset"])
            except (KafkaError, LogError) as e:
                results.append({"partition_index": index, "low_watermark": -1, "error_code": e.code})
                continue
            results.append({"partition_index": index, "low_watermark": low, "error_code": ErrorCode.NONE})
        topics.append({"name": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(21, "DeleteRecords", 0, 2, handle)]
