"""DescribeClientQuotas (key 48) and AlterClientQuotas (key 49): user and client id quotas, as
``kafka-configs --entity-type users|clients --alter --add-config producer_byte_rate=...`` manages
them.  The filter and the checks are in ``quota/filters.py`` and ``quota/alterations.py``; the
quotas are kept in ``/config/users`` and ``/config/clients`` (``metadata/znodes.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.quota import alterations, filters
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def describe(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not cluster_allowed(broker, ctx, Operation.DESCRIBE_CONFIGS):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                "entries": None}
    try:
        found = filters.describe(broker.metadata.client_quotas, body["components"], body["strict"])
    except filters.QuotaRequestError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "error_message": e.message, "entries": None}
    entries = [{
        "entity": [{"entity_type": kind, "entity_name": name} for kind, name in entity.entries().items()],
        "values": [{"key": key, "value": value} for key, value in sorted(values.items())],
    } for entity, values in found]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "entries": entries}


async def alter(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    results = []
    permitted = cluster_allowed(broker, ctx, Operation.ALTER_CONFIGS)
    for alteration in alterations.plan(body["entries"]):
        if not permitted:
            results.append({"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
                            "entity": alteration.wire_entity})
            continue
        if alteration.error is None and not body["validate_only"] and alteration.changes:
            await broker.controller.alter_entity_configs(alteration.path, alteration.changes)
        code, message = alteration.error or (ErrorCode.NONE, None)
        results.append({"error_code": code, "error_message": message, "entity": alteration.wire_entity})
    return {"throttle_time_ms": 0, "entries": results}


APIS = [
    Api(48, "DescribeClientQuotas", 0, 1, describe),
    Api(49, "AlterClientQuotas", 0, 1, alter),
]
