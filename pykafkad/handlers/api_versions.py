"""ApiVersions (key 18): what this broker serves, the features it supports and the levels the
cluster has finalized (v3+, KIP-584: Java clients take transaction version 2 from them), and the
KIP-511 answer to versions it does not know; from v5, the check that the client reached the cluster and
node it meant (KIP-1242)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.metadata.features import SUPPORTED
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

API_VERSIONS_KEY = 18
# Before v4, features whose lowest level is 0 are left out: older clients cannot read such a
# range (KAFKA-17492), as Kafka does.
ZERO_MIN_FEATURES_FROM = 4
UNKNOWN_NODE = -1


def _api_keys(broker: Broker | None = None) -> list[dict[str, int]]:
    from pykafkad.handlers import APIS
    from pykafkad.handlers.telemetry import GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY, telemetry_enabled

    # The telemetry APIs are advertised only with a receiver for the metrics (metrics.listener), as
    # Kafka with a plugin.  KIP-848's are advertised even without `consumer` in
    # group.coordinator.rebalance.protocols, as Kafka 4.4 does: the heartbeat then answers
    # UNSUPPORTED_VERSION.
    hidden: set[int] = set()
    if broker is None or not telemetry_enabled(broker):
        hidden |= {GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY}
    return [
        {"api_key": api.key, "min_version": api.min_version, "max_version": api.max_version}
        for api in sorted(APIS.values(), key=lambda a: a.key) if api.key not in hidden
    ]


def unsupported_version_response(correlation_id: int) -> bytes:
    """UNSUPPORTED_VERSION in the v0 layout, listing what we support, for a too-new ApiVersions."""
    body = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": _api_keys()}
    return wire.encode_response(API_VERSIONS_KEY, 0, correlation_id, body)


def _stale_target(broker: Broker, body: dict[str, Any]) -> ErrorCode | None:
    """v5 (KIP-1242): a client names the cluster and node it believes it reached.  Both or neither
    must be given (INVALID_REQUEST otherwise, as Kafka 4.4 answers); a mismatch asks the client to
    rebootstrap, since its metadata points at a broker that is not the one it knew."""
    cluster_id, node_id = body.get("cluster_id"), body.get("node_id", UNKNOWN_NODE)
    if cluster_id is None and node_id == UNKNOWN_NODE:
        return None
    if cluster_id is None or node_id == UNKNOWN_NODE:
        return ErrorCode.INVALID_REQUEST
    if cluster_id != broker.metadata.cluster_id or node_id != broker.metadata.node_id:
        return ErrorCode.REBOOTSTRAP_REQUIRED
    return None


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    refused = _stale_target(broker, body)
    if refused is not None:
        return {"error_code": refused, "api_keys": [], "throttle_time_ms": 0}
    finalized = broker.metadata.features
    supported = [{"name": name, "min_version": low, "max_version": high}
                 for name, (low, high) in sorted(SUPPORTED.items())
                 if low > 0 or ctx.api_version >= ZERO_MIN_FEATURES_FROM]
    return {"error_code": ErrorCode.NONE, "api_keys": _api_keys(broker), "throttle_time_ms": 0,
            "supported_features": supported, "finalized_features_epoch": finalized.epoch,
            "finalized_features": [{"name": name, "max_version_level": level, "min_version_level": level}
                                   for name, level in sorted(finalized.levels.items())]}


APIS = [Api(API_VERSIONS_KEY, "ApiVersions", 0, 5, handle)]
