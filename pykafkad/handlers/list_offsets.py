"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp offset lookups, on the leader;
read_committed (v2+) answers below the last stable offset instead of the high watermark.  The tiered
storage lookups (latest tiered v9+, earliest pending upload v11+) find nothing, as on a Kafka broker
without tiered storage; v10's timeout is for remote reads and has nothing to wait for here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.replica.partition import (
    EARLIEST,
    EARLIEST_LOCAL,
    EARLIEST_PENDING_UPLOAD,
    LATEST,
    LATEST_TIERED,
    MAX_TIMESTAMP,
)
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

UNKNOWN = -1
# The version from which each special timestamp is understood; below it, and for any other negative
# timestamp, Kafka answers UNSUPPORTED_VERSION (a client that sends one has not negotiated it).
SPECIAL_TIMESTAMP_FROM = {LATEST: 0, EARLIEST: 0, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9,
                          EARLIEST_PENDING_UPLOAD: 11}


def _understood(timestamp: int, version: int) -> bool:
    return timestamp >= 0 or version >= SPECIAL_TIMESTAMP_FROM.get(timestamp, version + 1)


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
                if not _understood(part["timestamp"], ctx.api_version):
                    raise KafkaError(ErrorCode.UNSUPPORTED_VERSION)
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
                            "offset": offset, "leader_epoch": partition.leader_epoch if offset >= 0 else -1})
        topics.append({"name": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(2, "ListOffsets", 1, 11, handle)]
