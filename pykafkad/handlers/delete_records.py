"""DeleteRecords (key 21): move a partition's log start offset forward on demand, on the leader; the
answer waits until every replica on a live broker has moved its log start that far (or the request's
timeout passes), as in Kafka."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    wanted: list[tuple[str, int, int]] = []
    # Per topic: its partitions, each with its place in ``wanted`` or its refusal.
    layout: list[tuple[str, list[tuple[int, int | ErrorCode]]]] = []
    for topic in body["topics"]:
        name = topic["name"]
        permitted = allowed(broker, ctx, Operation.DELETE, ResourceType.TOPIC, name)
        slots: list[tuple[int, int | ErrorCode]] = []
        for part in topic["partitions"]:
            if permitted:
                slots.append((part["partition_index"], len(wanted)))
                wanted.append((name, part["partition_index"], part["offset"]))
            else:
                slots.append((part["partition_index"], ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        layout.append((name, slots))
    answers = await broker.replicas.delete_records(wanted, body["timeout_ms"])
    topics = []
    for name, slots in layout:
        results = []
        for index, slot in slots:
            low, code = (-1, slot) if isinstance(slot, ErrorCode) else answers[slot]
            results.append({"partition_index": index, "low_watermark": low, "error_code": code})
        topics.append({"name": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(21, "DeleteRecords", 0, 2, handle)]
