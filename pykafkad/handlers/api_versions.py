"""ApiVersions (key 18): what this broker serves, the features it supports and the levels the
cluster has finalized (v3+, KIP-584: Java clients take transaction version 2 from them), and the
KIP-511 answer to versions it does not know."""

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


def _api_keys() -> list[dict[str, int]]:
    from pykafkad.handlers import APIS

    return [
        {"api_key": api.key, "min_version": api.min_version, "max_version": api.max_version}
        for api in sorted(APIS.values(), key=lambda a: a.key)
    ]


def unsupported_version_response(correlation_id: int) -> bytes:
    """UNSUPPORTED_VERSION in the v0 layout, listing what we support, for a too-new ApiVersions."""
    body = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": _api_keys()}
    return wire.encode_response(API_VERSIONS_KEY, 0, correlation_id, body)


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    finalized = broker.metadata.features
    supported = [{"name": name, "min_version": low, "max_version": high}
                 for name, (low, high) in sorted(SUPPORTED.items())
                 if low > 0 or ctx.api_version >= ZERO_MIN_FEATURES_FROM]
    return {"error_code": ErrorCode.NONE, "api_keys": _api_keys(), "throttle_time_ms": 0,
            "supported_features": supported, "finalized_features_epoch": finalized.epoch,
            "finalized_features": [{"name": name, "max_version_level": level, "min_version_level": level}
                                   for name, level in sorted(finalized.levels.items())]}


APIS = [Api(API_VERSIONS_KEY, "ApiVersions", 0, 4, handle)]
