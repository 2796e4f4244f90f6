"""Classic group membership and administration: JoinGroup (11), Heartbeat (12), LeaveGroup (13),
SyncGroup (14), DescribeGroups (15), ListGroups (16), DeleteGroups (42).

Each request is checked for what needs no group state (group id, session timeout) and then
handed to the group's actor through ``broker.groups``; JoinGroup and SyncGroup wait there
until the rebalance answers them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.requests import (
    DeleteGroup,
    DescribeGroup,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    ListGroup,
    SyncGroup,
    join_error,
)
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed, operations
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

# From DescribeGroups v6 (KIP-1043) a group that does not exist is GROUP_ID_NOT_FOUND, not a Dead
# group without error.
GROUP_NOT_FOUND_FROM = 6

if TYPE_CHECKING:
    from pykafkad.broker import Broker



def _group_allowed(broker: Broker, ctx: RequestContext, operation: Operation, group_id: str,
                   log_denial: bool = True) -> bool:
    return allowed(broker, ctx, operation, ResourceType.GROUP, group_id, log_denial)


def client_host(ctx: RequestContext) -> str:
    """The member host as Kafka shows it (``/127.0.0.1``)."""
    host = ctx.peer.rsplit(":", 1)[0] if ":" in ctx.peer else ctx.peer
    return "/" + host


def _join_response(ctx: RequestContext, result: dict[str, Any]) -> dict[str, Any]:
    response = {"throttle_time_ms": 0, **result}
    if ctx.api_version < 7 and response["protocol_name"] is None:
        response["protocol_name"] = ""
    return response


async def join_group(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    group_id = body["group_id"]
    config = broker.groups.config
    if not group_id:
        return _join_response(ctx, join_error(ErrorCode.INVALID_GROUP_ID, body["member_id"]))
    if not _group_allowed(broker, ctx, Operation.READ, group_id):
        return _join_response(ctx, join_error(ErrorCode.GROUP_AUTHORIZATION_FAILED, body["member_id"]))
    session = body["session_timeout_ms"]
    if not config.min_session_timeout_ms <= session <= config.max_session_timeout_ms:
        return _join_response(ctx, join_error(ErrorCode.INVALID_SESSION_TIMEOUT, body["member_id"]))
    rebalance = body["rebalance_timeout_ms"] if ctx.api_version >= 1 else -1
    request = JoinGroup(
        version=ctx.api_version,
        member_id=body["member_id"],
        group_instance_id=body["group_instance_id"] if ctx.api_version >= 5 else None,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        session_timeout_ms=session,
        rebalance_timeout_ms=rebalance if rebalance > 0 else session,
        protocol_type=body["protocol_type"],
        protocols=[(p["name"], p["metadata"]) for p in body["protocols"]],
    )
    return _join_response(ctx, await broker.groups.call(group_id, request))


async def sync_group(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not body["group_id"]:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_GROUP_ID, "assignment": b""}
    if not _group_allowed(broker, ctx, Operation.READ, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "assignment": b""}
    if ctx.api_version >= 5 and (body["protocol_type"] is None or body["protocol_name"] is None):
        # From v5 both are mandatory, as Kafka checks before looking at the group.
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "assignment": b""}
    request = SyncGroup(
        member_id=body["member_id"],
        generation_id=body["generation_id"],
        group_instance_id=body["group_instance_id"] if ctx.api_version >= 3 else None,
        protocol_type=body["protocol_type"] if ctx.api_version >= 5 else None,
        protocol_name=body["protocol_name"] if ctx.api_version >= 5 else None,
        assignments=body["assignments"],
    )
    return {"throttle_time_ms": 0, **await broker.groups.call(body["group_id"], request)}


async def heartbeat(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not body["group_id"]:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_GROUP_ID}
    if not _group_allowed(broker, ctx, Operation.READ, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    request = Heartbeat(member_id=body["member_id"], generation_id=body["generation_id"],
                        group_instance_id=body["group_instance_id"] if ctx.api_version >= 3 else None)
    return {"throttle_time_ms": 0, **await broker.groups.call(body["group_id"], request)}


async def leave_group(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.api_version >= 3:
        members = [{"member_id": m["member_id"], "group_instance_id": m["group_instance_id"]}
                   for m in body["members"]]
    else:
        members = [{"member_id": body["member_id"], "group_instance_id": None}]
    if not body["group_id"]:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_GROUP_ID, "members": []}
    if not _group_allowed(broker, ctx, Operation.READ, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "members": []}
    result = await broker.groups.call(body["group_id"], LeaveGroup(members))
    if ctx.api_version < 3 and result["error_code"] == ErrorCode.NONE and result["members"]:
        # Before v3 a leave names one member, whose error is the response's.
        result = {**result, "error_code": result["members"][0]["error_code"]}
    return {"throttle_time_ms": 0, **result}


async def describe_groups(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    groups = []
    for group_id in body["groups"]:
        if not group_id:
            groups.append({"error_code": ErrorCode.INVALID_GROUP_ID, "group_id": group_id, "group_state": "",
                           "protocol_type": "", "protocol_data": "", "members": []})
            continue
        if not _group_allowed(broker, ctx, Operation.DESCRIBE, group_id):
            groups.append({"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "group_id": group_id,
                           "group_state": "", "protocol_type": "", "protocol_data": "", "members": []})
            continue
        described = await broker.groups.call(group_id, DescribeGroup(ctx.api_version))
        if ctx.api_version >= GROUP_NOT_FOUND_FROM and described["error_code"] == ErrorCode.NONE \
                and described["group_state"] == "Dead":
            described = {**described, "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
                         "error_message": f"Group {group_id} not found."}
        groups.append({**described, "authorized_operations": operations(
            broker, ctx, ResourceType.GROUP, group_id, body.get("include_authorized_operations", False))})
    return {"throttle_time_ms": 0, "groups": groups}


async def list_groups(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not await broker.groups.groups_loaded():
        # Kafka's group coordinator fails the whole listing while one of its partitions loads
        # (a partial list would look complete); clients retry.
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "groups": []}
    states = {s.lower() for s in body["states_filter"]} if ctx.api_version >= 4 else set()
    types = {t.lower() for t in body["types_filter"]} if ctx.api_version >= 5 else set()
    listed = []
    # DESCRIBE on the cluster lists every group; otherwise only the groups the principal may describe.
    every_group = cluster_allowed(broker, ctx, Operation.DESCRIBE, log_denial=False)
    for group_id in sorted(broker.groups.group_ids()):
        if not every_group and not _group_allowed(broker, ctx, Operation.DESCRIBE, group_id, log_denial=False):
            continue
        entry = await broker.groups.call(group_id, ListGroup())
        if not entry:
            continue
        if states and entry["group_state"].lower() not in states:
            continue
        if types and entry["group_type"].lower() not in types:
            continue
        listed.append(entry)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "groups": listed}


async def delete_groups(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    results = []
    for group_id in body["groups_names"]:
        if not group_id:
            results.append({"group_id": group_id, "error_code": ErrorCode.INVALID_GROUP_ID})
            continue
        if not _group_allowed(broker, ctx, Operation.DELETE, group_id):
            results.append({"group_id": group_id, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED})
            continue
        # A share group's share state goes first (Kafka chains the share group's delete before the
        # others'); what stops it is the group's answer.
        share_error = await broker.share_group_offsets.delete_group_state(group_id)
        if share_error not in (None, ErrorCode.NONE):
            results.append({"group_id": group_id, "error_code": share_error})
            continue
        result = await broker.groups.call(group_id, DeleteGroup())
        results.append({"group_id": group_id, "error_code": result["error_code"]})
    return {"throttle_time_ms": 0, "results": results}


APIS = [
    Api(11, "JoinGroup", 0, 9, join_group),
    Api(12, "Heartbeat", 0, 4, heartbeat),
    Api(13, "LeaveGroup", 0, 5, leave_group),
    Api(14, "SyncGroup", 0, 5, sync_group),
    Api(15, "DescribeGroups", 0, 6, describe_groups),
    Api(16, "ListGroups", 0, 5, list_groups),
    Api(42, "DeleteGroups", 0, 3, delete_groups),
]
