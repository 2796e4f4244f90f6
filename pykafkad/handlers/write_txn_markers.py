"""WriteTxnMarkers (key 27, v1): a transaction coordinator asks this broker, as the leader of each
partition named, to write COMMIT or ABORT markers; each is answered once replicated.  Kafka's admin
client sends it too, to abort a hanging transaction (``kafka-transactions.sh abort``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

MARKER_TIMEOUT_S = 30.0


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    answers: list[dict[str, Any]] = []
    # Only brokers write markers: CLUSTER_ACTION on the cluster, else every partition is refused.
    permitted = cluster_allowed(broker, ctx, Operation.CLUSTER_ACTION)
    for marker in body["markers"]:
        topics: list[dict[str, Any]] = []
        for topic in marker["topics"]:
            code = ErrorCode.NONE if permitted else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            partitions = [{"partition_index": i, "error_code": code} for i in topic["partition_indexes"]]
            topics.append({"name": topic["name"], "partitions": partitions})
        answers.append({"producer_id": marker["producer_id"], "topics": topics})

    async def write(marker: dict[str, Any], name: str, entry: dict[str, Any]) -> None:
        entry["error_code"] = await broker.replicas.write_marker(
            name, entry["partition_index"], marker["producer_id"], marker["producer_epoch"],
            marker["transaction_result"], marker["coordinator_epoch"], MARKER_TIMEOUT_S)

    async with trio.open_nursery() as nursery:
        for marker, answer in zip(body["markers"], answers, strict=True):
            for topic in answer["topics"]:
                for entry in topic["partitions"]:
                    if not permitted:
                        continue
                    nursery.start_soon(write, marker, topic["name"], entry)
    return {"markers": answers}


APIS = [Api(27, "WriteTxnMarkers", 1, 1, handle)]
