"""InitProducerId (key 22): producer ids and epochs for idempotent producers.

Transactional ids need the transaction coordinator, which this broker does not have yet;
such requests get a clear error instead of a hang.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if body["transactional_id"] is not None:
        log.warning("client %s asked for transactional id %r: transactions are not supported yet",
                    ctx.client_id, body["transactional_id"])
        return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST, "producer_id": -1,
                "producer_epoch": -1}
    if body["producer_id"] >= 0 and body["producer_epoch"] >= 0:
        producer_id, epoch = await broker.producer_ids.bump(body["producer_id"], body["producer_epoch"])
    else:
        producer_id, epoch = await broker.producer_ids.next_id(), 0
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "producer_id": producer_id,
            "producer_epoch": epoch}


APIS = [Api(22, "InitProducerId", 0, 5, handle)]
