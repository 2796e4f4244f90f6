"""UpdateFeatures (key 57, v0-2): ``kafka-features.sh upgrade / downgrade / disable`` changes the
levels the cluster finalizes (``transaction.version``), with Kafka's checks and messages.

A lower level needs a downgrade type (v1+, or ``allow_downgrade`` in v0); level 0 disables a
feature; ``validate_only`` checks without writing.  Any broker takes the request: the levels live
in the metadata store, which every broker watches.  v0-1 answer per feature, v2 only at the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.metadata.features import SUPPORTED
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
PER_FEATURE_RESULTS_BELOW = 2


def _problem(name: str, level: int, upgrade_type: int, current: int) -> str | None:
    if name not in SUPPORTED:
        return f"Feature {name} is not supported by this broker (supported: {', '.join(sorted(SUPPORTED))})."
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return f"Invalid upgrade type {upgrade_type} for feature {name}."
    low, high = SUPPORTED[name]
    if level != 0 and not low <= level <= high:
        return (f"Invalid update version {level} for feature {name}. Broker supports versions "
                f"{low}-{high}.")
    if level < current and upgrade_type == UPGRADE:
        return ("Can't downgrade the version of this feature without setting the upgrade type to "
                "either safe or unsafe downgrade.")
    return None


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    current = broker.metadata.features
    updates = body["feature_updates"]
    if not cluster_allowed(broker, ctx, Operation.ALTER):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                "results": [{"feature": u["feature"], "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                             "error_message": None} for u in updates] if ctx.api_version < PER_FEATURE_RESULTS_BELOW
                else []}
    wanted = dict(current.levels)
    results = []
    first_error: tuple[ErrorCode, str] | None = None
    for u in updates:
        name, level = u["feature"], u["max_version_level"]
        upgrade_type = u.get("upgrade_type", UPGRADE)
        if ctx.api_version == 0:
            upgrade_type = SAFE_DOWNGRADE if u.get("allow_downgrade") else UPGRADE
        problem = _problem(name, level, upgrade_type, current.level(name))
        if problem is None:
            wanted[name] = level
            results.append({"feature": name, "error_code": ErrorCode.NONE, "error_message": None})
        else:
            first_error = first_error or (ErrorCode.INVALID_UPDATE_VERSION, problem)
            results.append({"feature": name, "error_code": ErrorCode.INVALID_UPDATE_VERSION, "error_message": problem})
    if not updates:
        first_error = (ErrorCode.INVALID_REQUEST, "No feature updates were specified.")
    elif first_error is None and not body.get("validate_only", False):
        await broker.controller.set_features(wanted)
    if ctx.api_version < PER_FEATURE_RESULTS_BELOW and updates:
        # v0-1 carry each feature's outcome; the top level says only whether the request was taken.
        if first_error is not None:
            results = [r if r["error_code"] else {**r, "error_code": ErrorCode.INVALID_UPDATE_VERSION,
                                                  "error_message": "Another feature update in the request failed."}
                       for r in results]
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "results": results}
    code, message = first_error if first_error is not None else (ErrorCode.NONE, None)
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "results": []}


APIS = [Api(57, "UpdateFeatures", 0, 2, handle)]
