"""OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, which clients use to detect truncation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = []
    # A follower (replica_id >= 0, v3+) needs CLUSTER_ACTION; a consumer DESCRIBE on the topic.
    follower = body.get("replica_id", -1) >= 0
    follower_denied = follower and not cluster_allowed(broker, ctx, Operation.CLUSTER_ACTION)
    for wanted in body["topics"]:
        name = wanted["topic"]
        results = []
        denied = follower_denied or (not follower and not allowed(broker, ctx, Operation.DESCRIBE,
                                                                  ResourceType.TOPIC, name))
        for part in wanted["partitions"]:
            index = part["partition"]
            try:
                if denied:
                    raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED if follower_denied
                                     else ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                partition = broker.replicas.leader(name, index, part["current_leader_epoch"])
            except KafkaError as e:
                results.append({"error_code": e.code, "partition": index, "leader_epoch": -1, "end_offset": -1})
                continue
            epoch, end_offset = partition.end_offset_for_epoch(part["leader_epoch"])
            results.append({"error_code": ErrorCode.NONE, "partition": index, "leader_epoch": epoch,
                            "end_offset": end_offset})
        topics.append({"topic": name, "partitions": results})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [Api(23, "OffsetForLeaderEpoch", 2, 4, handle)]
