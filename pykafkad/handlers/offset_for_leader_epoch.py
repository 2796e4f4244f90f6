"""OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, which clients use to detect truncation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.leader_epochs import check_leader_epoch
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for wanted in body["topics"]:
        name = wanted["topic"]
        topic = broker.topic(name)
        results = []
        for part in wanted["partitions"]:
            index = part["partition"]
            plog = broker.logs.get(name, index) if topic is not None else None
            if plog is None:
                results.append({"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "partition": index,
                                "leader_epoch": -1, "end_offset": -1})
                continue
            error = check_leader_epoch(part["current_leader_epoch"], topic.partitions[index].leader_epoch)
            if error is not None:
                results.append({"error_code": error, "partition": index, "leader_epoch": -1, "end_offset": -1})
                continue
            current = topic.partitions[index].leader_epoch
            if part["leader_epoch"] == current:
                # The current leader's epoch ends at the log end, as Kafka's leader answers.
                epoch, end_offset = current, plog.log_end_offset
            else:
                epoch, end_offset = plog.end_offset_for_epoch(part["leader_epoch"])
            results.append({"error_code": ErrorCode.NONE, "partition": index, "leader_epoch": epoch,
                            "end_offset": end_offset})
        topics.append({"topic": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(23, "OffsetForLeaderEpoch", 2, 4, handle)]
