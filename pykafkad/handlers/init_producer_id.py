"""InitProducerId (key 22): producer ids and epochs for idempotent producers, and for transactional
ids through the transaction coordinator (which fences the id's earlier producer).  Versions before
4 know no PRODUCER_FENCED and get INVALID_PRODUCER_EPOCH instead, as from Kafka.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, ResourceType, allowed, allowed_any, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.transactions import fenced_shim
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

FENCED_FROM = 4


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if (body["producer_id"] == -1) != (body["producer_epoch"] == -1):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST, "producer_id": -1,
                "producer_epoch": -1}
    txn_id = body["transactional_id"]
    if txn_id is not None:
        if txn_id == "":
            return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST, "producer_id": -1,
                    "producer_epoch": -1}
        if not allowed(broker, ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id):
            return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    "producer_id": -1, "producer_epoch": -1}
        expected = (body["producer_id"], body["producer_epoch"]) if body["producer_id"] >= 0 else None
        code, producer_id, epoch = await broker.transactions.init_producer_id(
            txn_id, body["transaction_timeout_ms"], expected)
        return {"throttle_time_ms": 0, "error_code": fenced_shim(code, ctx.api_version, FENCED_FROM),
                "producer_id": producer_id, "producer_epoch": epoch}
    # An idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679).
    if not (cluster_allowed(broker, ctx, Operation.IDEMPOTENT_WRITE)
            or allowed_any(broker, ctx, Operation.WRITE, ResourceType.TOPIC)):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "producer_id": -1,
                "producer_epoch": -1}
    if body["producer_id"] >= 0 and body["producer_epoch"] >= 0:
        producer_id, epoch = await broker.producer_ids.bump(body["producer_id"], body["producer_epoch"])
    else:
        producer_id, epoch = await broker.producer_ids.next_id(), 0
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "producer_id": producer_id,
            "producer_epoch": epoch}


APIS = [Api(22, "InitProducerId", 0, 5, handle)]
