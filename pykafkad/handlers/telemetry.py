"""Client telemetry (KIP-714): GetTelemetrySubscriptions (71) and PushTelemetry (72).

Kafka serves them only when a plugin receives the pushed metrics; pykafkad's receiver is its own
``/metrics``, so both are served (and advertised) while ``metrics.listener`` is set.  The state of
client instances and their metrics is ``pykafkad.client_telemetry``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.client_telemetry import ClientIdentity
from pykafkad.errors import KafkaError
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY = 71, 72


def telemetry_enabled(broker: Broker) -> bool:
    return bool(broker.config["metrics.listener"])


def _identity(ctx: RequestContext) -> ClientIdentity:
    address, _, port = ctx.peer.rpartition(":")
    name, version = ctx.client_software or ("", "")
    return ClientIdentity(ctx.client_id or "", name, version, address.strip("[]"), port)


async def get_telemetry_subscriptions(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not telemetry_enabled(broker):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.UNSUPPORTED_VERSION}
    answer = broker.client_telemetry.subscription(_identity(ctx), body["client_instance_id"])
    return {"throttle_time_ms": 0, **answer}


async def push_telemetry(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not telemetry_enabled(broker):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.UNSUPPORTED_VERSION}
    try:
        broker.client_telemetry.push(body["client_instance_id"], body["subscription_id"], body["terminating"],
                                     body["compression_type"], body["metrics"])
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code}
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE}


APIS = [
    Api(GET_TELEMETRY_SUBSCRIPTIONS, "GetTelemetrySubscriptions", 0, 0, get_telemetry_subscriptions),
    Api(PUSH_TELEMETRY, "PushTelemetry", 0, 0, push_telemetry),
]
