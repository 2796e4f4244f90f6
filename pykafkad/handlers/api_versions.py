"""ApiVersions (key 18): what this broker serves, and the KIP-511 answer to versions it does not know."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

API_VERSIONS_KEY = 18


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
    return {"error_code": ErrorCode.NONE, "api_keys": _api_keys(), "throttle_time_ms": 0}


APIS = [Api(API_VERSIONS_KEY, "ApiVersions", 0, 4, handle)]
