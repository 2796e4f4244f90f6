"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp offset lookups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.leader_epochs import check_leader_epoch
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog
    from pykafkad.broker import Broker

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3  # KIP-734
EARLIEST_LOCAL = -4  # KIP-405; with no tiered storage, the log start
UNKNOWN = -1


def _lookup(plog: PartitionLog, timestamp: int) -> tuple[int, int] | ErrorCode:
    """(offset, timestamp) for a ListOffsets target, or the error for an unknown special value."""
    if timestamp == LATEST:
        return plog.log_end_offset, UNKNOWN
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return plog.log_start_offset, UNKNOWN
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
        return (found[0], found[1]) if found else (UNKNOWN, UNKNOWN)
    if timestamp < 0:
        return ErrorCode.INVALID_REQUEST
    found = plog.offset_for_timestamp(timestamp)
    return (found[0], found[1]) if found else (UNKNOWN, UNKNOWN)


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    for wanted in body["topics"]:
        name = wanted["name"]
        topic = broker.topic(name)
        results = []
        for part in wanted["partitions"]:
            index = part["partition_index"]
            plog = broker.logs.get(name, index) if topic is not None else None
            error: ErrorCode | None = None
            if plog is None:
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                error = check_leader_epoch(part["current_leader_epoch"], topic.partitions[index].leader_epoch)
            if error is None:
                found = _lookup(plog, part["timestamp"])
                if isinstance(found, tuple):
                    offset, timestamp = found
                    results.append({"partition_index": index, "error_code": ErrorCode.NONE,
                                    "timestamp": timestamp, "offset": offset,
                                    "leader_epoch": topic.partitions[index].leader_epoch})
                    continue
                error = found
            results.append({"partition_index": index, "error_code": error, "timestamp": UNKNOWN,
                            "offset": UNKNOWN, "leader_epoch": -1})
        topics.append({"name": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(2, "ListOffsets", 1, 8, handle)]
