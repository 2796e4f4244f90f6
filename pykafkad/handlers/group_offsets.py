"""Committed offsets: OffsetCommit (8), OffsetFetch (9, including the multi-group v8+ form),
OffsetDelete (47).  The group's actor validates generation and member and writes
``__consumer_offsets``; this module shapes the per-version request and response, including the
topic ids that replace names from OffsetCommit and OffsetFetch v10.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.requests import CommitOffsets, DeleteOffsets, FetchOffsets
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.topic_ids import NO_TOPIC_ID, named_topics, topic_id, unknown_topic_results
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


# From OffsetCommit v10 and OffsetFetch v10 (KIP-848) topics are named by id only.
BY_TOPIC_ID_FROM = 10


async def offset_commit(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    group_id = body["group_id"]
    by_id = ctx.api_version >= BY_TOPIC_ID_FROM
    results: dict[tuple[str, int], ErrorCode] = {}
    known: list[dict[str, Any]] = []
    group_denied = bool(group_id) and not allowed(broker, ctx, Operation.READ, ResourceType.GROUP, group_id)
    named, unknown_ids = named_topics(broker, body["topics"], by_id)
    for t in named:
        if group_denied or not _topic_readable(broker, ctx, t["name"]):
            code = ErrorCode.GROUP_AUTHORIZATION_FAILED if group_denied else ErrorCode.TOPIC_AUTHORIZATION_FAILED
            results.update({(t["name"], p["partition_index"]): code for p in t["partitions"]})
            continue
        # As Kafka, partitions the cluster does not have are refused before the group sees them.
        topic = broker.topic(t["name"])
        count = len(topic.partitions) if topic is not None else 0
        parts = []
        for p in t["partitions"]:
            if 0 <= p["partition_index"] < count:
                parts.append(p)
            else:
                results[(t["name"], p["partition_index"])] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if parts:
            known.append({**t, "partitions": parts})
    if not group_id:
        results.update({(t["name"], p["partition_index"]): ErrorCode.INVALID_GROUP_ID
                        for t in known for p in t["partitions"]})
    elif known:
        request = CommitOffsets(version=ctx.api_version, generation_id=body["generation_id_or_member_epoch"],
                                member_id=body["member_id"],
                                group_instance_id=body["group_instance_id"] if ctx.api_version >= 7 else None,
                                topics=known)
        results.update((await broker.groups.call(group_id, request))["results"])
    answered = [{"name": t["name"], "topic_id": t.get("topic_id", NO_TOPIC_ID), "partitions": [
        {"partition_index": p["partition_index"], "error_code": results[(t["name"], p["partition_index"])]}
        for p in t["partitions"]]} for t in named]
    return {"throttle_time_ms": 0, "topics": answered + unknown_topic_results(unknown_ids)}


def _topic_readable(broker: Broker, ctx: RequestContext, name: str) -> bool:
    return allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, name)


async def _fetch_group(broker: Broker, ctx: RequestContext, group_id: str, topics: list[dict[str, Any]] | None,
                       require_stable: bool = False, member: tuple[str | None, int] = (None, -1)) -> dict[str, Any]:
    if not group_id:
        return {"error_code": ErrorCode.INVALID_GROUP_ID, "topics": []}
    if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.GROUP, group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "topics": []}
    denied = [] if topics is None else [t for t in topics
                                        if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, t["name"])]
    wanted = None if topics is None else [(t["name"], list(t["partition_indexes"])) for t in topics if t not in denied]
    result = await broker.groups.call(group_id, FetchOffsets(wanted, require_stable, *member))
    if topics is None and broker.authorizer is not None:
        # Asked for every committed offset: those of topics the principal may not describe are left out.
        result = {**result, "topics": [t for t in result["topics"] if allowed(
            broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, t["name"], log_denial=False)]}
    if denied:
        result = {**result, "topics": result["topics"] + [
            {"name": t["name"], "partitions": [
                {"partition_index": i, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
                 "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED} for i in t["partition_indexes"]]}
            for t in denied]}
    return result


async def _fetch_group_by_id(broker: Broker, ctx: RequestContext, group_id: str,
                             topics: list[dict[str, Any]] | None, require_stable: bool,
                             member: tuple[str | None, int] = (None, -1)) -> dict[str, Any]:
    """OffsetFetch v10: topics asked for and answered by id; an id that names no topic gets
    UNKNOWN_TOPIC_ID for its partitions, as Kafka 4.4 answers."""
    named, unknown = (None, []) if topics is None else named_topics(broker, topics, True)
    result = await _fetch_group(broker, ctx, group_id, named, require_stable, member)
    answered = [{**t, "topic_id": topic_id(broker, t["name"])} for t in result["topics"]]
    answered += [{"topic_id": t["topic_id"], "partitions": [
        {"partition_index": i, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
         "error_code": ErrorCode.UNKNOWN_TOPIC_ID} for i in t["partition_indexes"]]} for t in unknown]
    return {**result, "topics": answered}


async def offset_fetch(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.api_version >= 8:
        fetch_group = _fetch_group_by_id if ctx.api_version >= BY_TOPIC_ID_FROM else _fetch_group
        groups = []
        for g in body["groups"]:
            # v9+ (KIP-848): the member asking, checked against a consumer-protocol group.
            member = (g.get("member_id"), g.get("member_epoch", -1))
            result = await fetch_group(broker, ctx, g["group_id"], g["topics"], body["require_stable"], member)
            groups.append({"group_id": g["group_id"], "error_code": result["error_code"], "topics": result["topics"]})
        return {"throttle_time_ms": 0, "groups": groups}
    result = await _fetch_group(broker, ctx, body["group_id"], body["topics"], body.get("require_stable", False))
    return {"throttle_time_ms": 0, "error_code": result["error_code"], "topics": result["topics"]}


async def offset_delete(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not body["group_id"]:
        return {"error_code": ErrorCode.INVALID_GROUP_ID, "throttle_time_ms": 0, "topics": []}
    if not allowed(broker, ctx, Operation.DELETE, ResourceType.GROUP, body["group_id"]):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "throttle_time_ms": 0, "topics": []}
    readable = [t for t in body["topics"] if _topic_readable(broker, ctx, t["name"])]
    result = await broker.groups.call(body["group_id"], DeleteOffsets(readable))
    denied = [{"name": t["name"], "partitions": [
        {"partition_index": p["partition_index"], "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        for p in t["partitions"]]} for t in body["topics"] if t not in readable]
    return {"throttle_time_ms": 0, **result, "topics": result.get("topics", []) + denied}


APIS = [
    Api(8, "OffsetCommit", 2, 10, offset_commit),
    Api(9, "OffsetFetch", 1, 10, offset_fetch),
    Api(47, "OffsetDelete", 0, 0, offset_delete),
]
