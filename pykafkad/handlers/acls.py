"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31): what ``kafka-acls.sh`` and the admin
clients' ACL calls speak.  Describing needs DESCRIBE on the cluster, changing needs ALTER; with no
authorizer configured each answers SECURITY_DISABLED, as Kafka does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourcePattern,
    ResourceType,
    creation_problem,
)
from pykafkad.security.acl_store import AclStoreError
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

NO_AUTHORIZER = "No Authorizer is configured on the broker"


def _enum(kind: type, code: int) -> Any:
    try:
        return kind(code)
    except ValueError:
        return kind(0)  # UNKNOWN


def _filter(body: dict[str, Any]) -> AclFilter:
    return AclFilter(_enum(ResourceType, body["resource_type_filter"]), body["resource_name_filter"],
                     _enum(PatternType, body.get("pattern_type_filter", PatternType.LITERAL)),
                     body["principal_filter"], body["host_filter"], _enum(Operation, body["operation"]),
                     _enum(Permission, body["permission_type"]))


def _described(binding: AclBinding) -> dict[str, Any]:
    e = binding.entry
    return {"principal": e.principal, "host": e.host, "operation": int(e.operation),
            "permission_type": int(e.permission)}


def _refusal(broker: Broker, ctx: RequestContext, operation: Operation) -> tuple[ErrorCode, str] | None:
    if broker.authorizer is None:
        return ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER
    if not cluster_allowed(broker, ctx, operation):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None
    return None


async def describe(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    refusal = _refusal(broker, ctx, Operation.DESCRIBE)
    acl_filter = _filter(body)
    if refusal is None and (problem := acl_filter.problem()) is not None:
        refusal = ErrorCode.INVALID_REQUEST, problem
    if refusal is not None:
        return {"throttle_time_ms": 0, "error_code": refusal[0], "error_message": refusal[1], "resources": []}
    by_pattern: dict[ResourcePattern, list[dict[str, Any]]] = {}
    for binding in broker.acls.bindings():
        if acl_filter.matches(binding):
            by_pattern.setdefault(binding.pattern, []).append(_described(binding))
    resources = [{"resource_type": int(p.resource_type), "resource_name": p.name, "pattern_type": int(p.pattern_type),
                  "acls": sorted(acls, key=lambda a: (a["principal"], a["host"], a["operation"]))}
                 for p, acls in sorted(by_pattern.items(), key=lambda i: (i[0].resource_type, i[0].name,
                                                                          i[0].pattern_type))]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "resources": resources}


async def create(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    refusal = _refusal(broker, ctx, Operation.ALTER)
    results: list[dict[str, Any]] = []
    valid: list[tuple[int, AclBinding]] = []
    for c in body["creations"]:
        binding = AclBinding(
            ResourcePattern(_enum(ResourceType, c["resource_type"]), c["resource_name"],
                            _enum(PatternType, c.get("resource_pattern_type", PatternType.LITERAL))),
            AccessControlEntry(c["principal"], c["host"], _enum(Operation, c["operation"]),
                               _enum(Permission, c["permission_type"])))
        problem = refusal or ((ErrorCode.INVALID_REQUEST, p) if (p := creation_problem(binding)) else None)
        if problem is None:
            valid.append((len(results), binding))
        results.append({"error_code": problem[0] if problem else ErrorCode.NONE,
                        "error_message": problem[1] if problem else None})
    for index, binding in valid:
        try:
            await broker.acls.add([binding])
        except AclStoreError as e:
            results[index] = {"error_code": ErrorCode.INVALID_REQUEST, "error_message": str(e)}
    return {"throttle_time_ms": 0, "results": results}


async def delete(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    refusal = _refusal(broker, ctx, Operation.ALTER)
    results = []
    for f in body["filters"]:
        acl_filter = _filter(f)
        problem = refusal or ((ErrorCode.INVALID_REQUEST, p) if (p := acl_filter.problem()) else None)
        if problem is not None:
            results.append({"error_code": problem[0], "error_message": problem[1], "matching_acls": []})
            continue
        matched = [b for b in broker.acls.bindings() if acl_filter.matches(b)]
        await broker.acls.remove(matched)
        results.append({"error_code": ErrorCode.NONE, "error_message": None, "matching_acls": [
            {"error_code": ErrorCode.NONE, "error_message": None, "resource_type": int(b.pattern.resource_type),
             "resource_name": b.pattern.name, "pattern_type": int(b.pattern.pattern_type), **_described(b)}
            for b in matched]})
    return {"throttle_time_ms": 0, "filter_results": results}


APIS = [
    Api(29, "DescribeAcls", 1, 3, describe),
    Api(30, "CreateAcls", 1, 3, create),
    Api(31, "DeleteAcls", 1, 3, delete),
]
