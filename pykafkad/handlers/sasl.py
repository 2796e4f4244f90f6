"""SaslHandshake (key 17) and SaslAuthenticate (key 36): a client on a SASL listener chooses its
mechanism, then exchanges tokens until it is authenticated (``security/sasl.py``).  Handshake v0
clients send the tokens as raw frames after it (the connection reads them); v1 clients send them
in SaslAuthenticate.  A failed exchange answers SASL_AUTHENTICATION_FAILED with the reason, and the
connection is closed after ``connection.failed.authentication.delay.ms``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pykafkad.handlers.api import Api, RequestContext
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.security.sasl import SaslFailure
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)


async def handshake(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    session = ctx.session
    if session is None or not session.may_handshake():
        # Not a SASL listener, or a handshake in the middle of an exchange.
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": session.enabled if session else []}
    if not session.handshake(body["mechanism"]):
        return {"error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "mechanisms": session.enabled}
    session.raw_tokens = ctx.api_version == 0 and not session.reauthenticating
    return {"error_code": ErrorCode.NONE, "mechanisms": session.enabled}


async def authenticate(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    session = ctx.session
    answer: dict[str, Any] = {"error_code": ErrorCode.NONE, "error_message": None, "auth_bytes": b"",
                              "session_lifetime_ms": 0}
    if session is None or not session.exchanging:
        return {**answer, "error_code": ErrorCode.ILLEGAL_SASL_STATE,
                "error_message": "Unexpected SaslAuthenticate request: no SASL handshake is under way"}
    reauthenticating = session.reauthenticating
    try:
        answer["auth_bytes"] = session.authenticate(bytes(body["auth_bytes"]))
    except SaslFailure as e:
        session.failed = True
        metrics.FAILED_AUTHENTICATIONS.labels(ctx.listener).inc()
        return {**answer, "error_code": ErrorCode.SASL_AUTHENTICATION_FAILED, "error_message": str(e)}
    if session.authenticated:
        metrics.SUCCESSFUL_AUTHENTICATIONS.labels(ctx.listener).inc()
        # KIP-368: the client is told how long the session lasts, and re-authenticates within it.
        answer["session_lifetime_ms"] = session.session_lifetime_ms()
        if reauthenticating:
            log.info("%s re-authenticated as User:%s with %s", ctx.peer, session.principal, session.mechanism)
    return answer


APIS = [
    Api(17, "SaslHandshake", 0, 1, handshake),
    Api(36, "SaslAuthenticate", 0, 2, authenticate),
]
