"""DescribeCluster (key 60): the cluster id, controller and brokers, as AdminClient.describeCluster sees them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import CLUSTER_NAME, ResourceType, operations
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

BROKERS_ENDPOINT = 1
CONTROLLERS_ENDPOINT = 2
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    endpoint_type = body["endpoint_type"]
    md = broker.metadata
    if endpoint_type not in (BROKERS_ENDPOINT, CONTROLLERS_ENDPOINT):
        return {"error_code": ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "error_message":
                f"Unsupported endpoint type {endpoint_type}", "endpoint_type": endpoint_type,
                "cluster_id": md.cluster_id, "controller_id": -1, "brokers": []}
    return {
        "error_code": ErrorCode.NONE,
        "endpoint_type": endpoint_type,
        "cluster_id": md.cluster_id,
        "controller_id": md.controller_id,
        "brokers": [
            {"broker_id": b.node_id, "host": e[0], "port": e[1], "rack": b.rack, "is_fenced": False}
            for b in md.brokers.values() if (e := b.endpoint(ctx.listener)) is not None
        ],
        "cluster_authorized_operations": operations(broker, ctx, ResourceType.CLUSTER, CLUSTER_NAME,
                                                    body["include_cluster_authorized_operations"]),
    }


APIS = [Api(60, "DescribeCluster", 0, 2, handle)]
