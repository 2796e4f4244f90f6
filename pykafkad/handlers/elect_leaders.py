"""ElectLeaders (key 43): preferred (v0+) and unclean (v1+) leader elections, as
``kafka-leader-election.sh`` and ``Admin.electLeaders`` ask for them; null partitions means all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.controller.leader_election import PREFERRED, UNCLEAN
from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    election_type = body["election_type"] if ctx.api_version >= 1 else PREFERRED
    if election_type not in (PREFERRED, UNCLEAN):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST, "replica_election_results": []}
    if not cluster_allowed(broker, ctx, Operation.ALTER):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                "replica_election_results": []}
    wanted = body["topic_partitions"]
    partitions = None if wanted is None else [(t["topic"], p) for t in wanted for p in t["partitions"]]
    outcomes = await broker.elections.elect(election_type, partitions, body["timeout_ms"])
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), (code, message) in outcomes.items():
        by_topic.setdefault(topic, []).append({"partition_id": index, "error_code": code, "error_message": message})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
            "replica_election_results": [{"topic": t, "partition_result": r} for t, r in by_topic.items()]}


APIS = [Api(43, "ElectLeaders", 0, 2, handle)]
