"""The transactional producer's APIs, answered by the transaction coordinator (transaction version 1):
AddPartitionsToTxn (24, v0-3), AddOffsetsToTxn (25, v0-4), EndTxn (26, v0-4) and TxnOffsetCommit
(28, v0-4, through the group coordinator).

Versions before 2 know no PRODUCER_FENCED: they get INVALID_PRODUCER_EPOCH instead, as from Kafka
(librdkafka sends exactly those versions).  An AddPartitionsToTxn naming a partition that does not
exist changes nothing: that partition gets UNKNOWN_TOPIC_OR_PARTITION and the others
OPERATION_NOT_ATTEMPTED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.offsets_store import OFFSETS_TOPIC
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

FENCED_FROM = 2


def fenced_shim(code: ErrorCode, version: int, since: int = FENCED_FROM) -> ErrorCode:
    """PRODUCER_FENCED as an older request version knows it."""
    return ErrorCode.INVALID_PRODUCER_EPOCH if code == ErrorCode.PRODUCER_FENCED and version < since else code


async def add_partitions(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    wanted = [(t["name"], p) for t in body["v3_and_below_topics"] for p in t["partitions"]]
    unknown = set()
    for name, index in wanted:
        topic = broker.topic(name)
        if topic is None or not 0 <= index < len(topic.partitions):
            unknown.add((name, index))
    if unknown:
        codes = {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED
                 for tp in wanted}
    else:
        code = await broker.transactions.add_partitions(
            body["v3_and_below_transactional_id"], body["v3_and_below_producer_id"],
            body["v3_and_below_producer_epoch"], set(wanted))
        code = fenced_shim(code, ctx.api_version)
        codes = dict.fromkeys(wanted, code)
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (name, index), code in codes.items():
        by_topic.setdefault(name, []).append({"partition_index": index, "partition_error_code": code})
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": [
        {"name": name, "results_by_partition": results} for name, results in by_topic.items()]}


async def add_offsets(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    offsets_partition = (OFFSETS_TOPIC, broker.groups.partition_for(body["group_id"]))
    code = await broker.transactions.add_partitions(body["transactional_id"], body["producer_id"],
                                                    body["producer_epoch"], {offsets_partition})
    return {"throttle_time_ms": 0, "error_code": fenced_shim(code, ctx.api_version)}


async def end_txn(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    code = await broker.transactions.end_transaction(body["transactional_id"], body["producer_id"],
                                                     body["producer_epoch"], body["committed"])
    return {"throttle_time_ms": 0, "error_code": fenced_shim(code, ctx.api_version)}


async def txn_offset_commit(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    """The group coordinator writes the offsets in the producer's transaction; they count once its
    COMMIT marker reaches the group's ``__consumer_offsets`` partition."""
    args = {**body, "version": ctx.api_version,
            "member_id": body.get("member_id") or "", "group_instance_id": body.get("group_instance_id")}
    result = await broker.groups.call(body["group_id"], "txn_commit", args)
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (name, index), code in result["results"].items():
        by_topic.setdefault(name, []).append({"partition_index": index, "error_code": code})
    return {"throttle_time_ms": 0,
            "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()]}


APIS = [
    Api(24, "AddPartitionsToTxn", 0, 3, add_partitions),
    Api(25, "AddOffsetsToTxn", 0, 4, add_offsets),
    Api(26, "EndTxn", 0, 4, end_txn),
    Api(28, "TxnOffsetCommit", 0, 4, txn_offset_commit),
]
