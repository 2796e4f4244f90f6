"""DescribeUserScramCredentials (key 50) and AlterUserScramCredentials (key 51): SCRAM users, as
``kafka-configs --entity-type users --alter --add-config 'SCRAM-SHA-256=[password=...]'`` manages
them.  Kept in ``/config/users/<user>`` as Kafka keeps them: salt, stored and server keys,
iterations (``security/scram_credentials.py``); the password itself never reaches the broker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.security import scram_credentials as scram
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def describe(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not cluster_allowed(broker, ctx, Operation.DESCRIBE):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                "results": []}
    users = broker.metadata.user_configs
    wanted = [u["name"] for u in body["users"] or []] or sorted(
        u for u, configs in users.items() if any(m in configs for m in scram.MECHANISM_NUMBERS))
    results = []
    for user in dict.fromkeys(wanted):
        configs = users.get(user, {})
        infos = [{"mechanism": number, "iterations": scram.decode(configs[name]).iterations}
                 for name, number in scram.MECHANISM_NUMBERS.items() if name in configs]
        if infos:
            results.append({"user": user, "error_code": ErrorCode.NONE, "error_message": None,
                            "credential_infos": infos})
        else:
            results.append({"user": user, "error_code": ErrorCode.RESOURCE_NOT_FOUND,
                            "error_message": "Attempt to describe a user credential that does not exist",
                            "credential_infos": []})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "results": results}


def _problem(user: str, mechanism: int, iterations: int | None, configs: dict[str, str],
             deleting: bool) -> tuple[ErrorCode, str] | None:
    if not user:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    name = scram.MECHANISM_IDS.get(mechanism)
    if name is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if deleting:
        if name not in configs:
            return ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        return None
    assert iterations is not None
    if iterations < scram.MIN_ITERATIONS[name]:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, f"Too few iterations: {iterations} < {scram.MIN_ITERATIONS[name]}"
    if iterations > scram.MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, f"Too many iterations: {iterations} > {scram.MAX_ITERATIONS}"
    return None


async def alter(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for d in body["deletions"]:
        changes.setdefault(d["name"], []).append(("delete", d))
    for u in body["upsertions"]:
        changes.setdefault(u["name"], []).append(("upsert", u))
    results = []
    if not cluster_allowed(broker, ctx, Operation.ALTER):
        return {"throttle_time_ms": 0, "results": [
            {"user": user, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None}
            for user in changes]}
    for user, items in changes.items():
        configs = dict(broker.metadata.user_configs.get(user, {}))
        updates: dict[str, str | None] = {}
        mechanisms = [item["mechanism"] for _, item in items]
        problem = (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request") \
            if len(set(mechanisms)) != len(mechanisms) else None
        for kind, item in items:
            if problem is not None:
                break
            problem = _problem(user, item["mechanism"], item.get("iterations"), configs, kind == "delete")
            name = scram.MECHANISM_IDS.get(item["mechanism"], "")
            if problem is None and kind == "delete":
                updates[name] = None
            elif problem is None:
                updates[name] = scram.from_salted_password(name, bytes(item["salt"]), bytes(item["salted_password"]),
                                                           item["iterations"]).encode()
        if problem is None:
            # Only the credentials change: the user's quotas in the same node stay as they are.
            await broker.controller.alter_user_configs(user, updates)
            results.append({"user": user, "error_code": ErrorCode.NONE, "error_message": None})
        else:
            results.append({"user": user, "error_code": problem[0], "error_message": problem[1]})
    return {"throttle_time_ms": 0, "results": results}


APIS = [
    Api(50, "DescribeUserScramCredentials", 0, 0, describe),
    Api(51, "AlterUserScramCredentials", 0, 0, alter),
]
