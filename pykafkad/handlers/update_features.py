"""UpdateFeatures (key 57, v0-2): ``kafka-features.sh upgrade / downgrade / disable`` (by feature
or ``--release``) changes the levels the cluster finalizes, with Kafka's checks and messages.

A lower level needs a downgrade type (v1+, or ``allow_downgrade`` in v0); level 0 disables a
feature; ``validate_only`` checks without writing.  A metadata.version downgrade across a
metadata change is refused, and a level's dependencies on metadata.version are checked, as
Kafka's FeatureControlManager does.  Any broker takes the request: the levels live in the
metadata store, which every broker watches.  v0-1 answer per feature, v2 only at the top.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.metadata.features import (
    METADATA_VERSION,
    METADATA_VERSION_NEEDED,
    NOT_IMPLEMENTED,
    SUPPORTED,
    metadata_changed,
)
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
PER_FEATURE_RESULTS_BELOW = 2
# Kafka's words (ControllerApis) for the one failure that fails a v2 request as a whole.
_ALL_FAILED = "The update failed for all features since the following feature had an error: "


def _reason(name: str, level: int, upgrade_type: int, current: int, proposed: dict[str, int],
            node_id: int) -> str | None:
    """Why ``name`` cannot go to ``level``, in Kafka's FeatureControlManager's words; None if it can."""
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return "The controller does not support the given upgrade type."
    if level < 0:
        return "A feature version cannot be less than 0."
    low, high = SUPPORTED.get(name, (0, 0))
    if not low <= level <= high:
        if high == 0:
            return f"Broker {node_id} does not support this feature."
        return f"Broker {node_id} only supports versions {low}-{high}"
    if level < current and upgrade_type == UPGRADE:
        return ("Can't downgrade the version of this feature without setting the upgrade type to "
                "either safe or unsafe downgrade.")
    if level > current and upgrade_type != UPGRADE:
        return "Can't downgrade to a newer version."
    needed = METADATA_VERSION_NEEDED.get((name, level))
    if needed is not None and proposed.get(METADATA_VERSION, 0) < needed:
        return f"{name} could not be set to {level} because it depends on {METADATA_VERSION} level {needed}"
    return None


def _problem(name: str, level: int, upgrade_type: int, current: int, proposed: dict[str, int],
             node_id: int) -> str | None:
    reason = _reason(name, level, upgrade_type, current, proposed, node_id)
    if reason is not None:
        return f"Invalid update version {level} for feature {name}. {reason}"
    if name == METADATA_VERSION and level < current and metadata_changed(current, level):
        if upgrade_type == UNSAFE_DOWNGRADE:
            return f"Invalid metadata.version {level}. Unsafe metadata downgrade is not supported in this version."
        return (f"Invalid metadata.version {level}. Refusing to perform the requested downgrade because it "
                "might delete metadata information.")
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
    # Dependencies are checked against the levels the whole request leads to, as Kafka does.
    proposed = {**current.levels, **{u["feature"]: u["max_version_level"] for u in updates}}
    results = []
    first_error: tuple[ErrorCode, str] | None = None
    for u in updates:
        name, level = u["feature"], u["max_version_level"]
        upgrade_type = u.get("upgrade_type", UPGRADE)
        if ctx.api_version == 0:
            upgrade_type = SAFE_DOWNGRADE if u.get("allow_downgrade") else UPGRADE
        problem = _problem(name, level, upgrade_type, current.level(name), proposed, broker.config.node_id)
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
        for name, level in sorted(wanted.items()):
            if level > 0 and name in NOT_IMPLEMENTED and level != current.level(name):
                log.warning("feature %s set to %d: recorded and described, but pykafkad does not implement %s",
                            name, level, NOT_IMPLEMENTED[name])
    if ctx.api_version < PER_FEATURE_RESULTS_BELOW and updates:
        # v0-1 carry each feature's outcome; the top level says only whether the request was taken.
        if first_error is not None:
            results = [r if r["error_code"] else {**r, "error_code": ErrorCode.INVALID_UPDATE_VERSION,
                                                  "error_message": "Another feature update in the request failed."}
                       for r in results]
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "results": results}
    code, message = first_error if first_error is not None else (ErrorCode.NONE, None)
    if first_error is not None and code == ErrorCode.INVALID_UPDATE_VERSION:
        message = _ALL_FAILED + first_error[1]
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "results": []}


APIS = [Api(57, "UpdateFeatures", 0, 2, handle)]
