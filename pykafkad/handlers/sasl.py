"""SaslHandshake (key 17) and SaslAuthenticate (key 36): a client on a SASL listener chooses its
mechanism, then exchanges tokens until it is authenticated (``security/sasl.py``).  Handshake v0
clients send the tokens as raw frames after it (the connection reads them); v1 clients send them
in SaslAuthenticate.  A failed exchange answers SASL_AUTHENTICATION_FAILED with the reason, and the
connection is closed after ``connection.failed.authentication.delay.ms``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.api import Api, RequestContext
from pykafkad.security.sasl import SaslFailure
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker


async def handshake(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    session = ctx.session
    if session is None or session.mechanism is not None:
        # Not a SASL listener, or a second handshake on the connection.
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": session.enabled if session else []}
    if not session.handshake(body["mechanism"]):
        return {"error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "mechanisms": session.enabled}
    session.raw_tokens = ctx.api_version == 0
    return {"error_code": ErrorCode.NONE, "mechanisms": session.enabled}


async def authenticate(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    session = ctx.session
    answer: dict[str, Any] = {"error_code": ErrorCode.NONE, "error_message": None, "auth_bytes": b"",
                              "session_lifetime_ms": 0}
    if session is None or session.mechanism is None or session.authenticated:
        return {**answer, "error_code": ErrorCode.ILLEGAL_SASL_STATE,
                "error_message": "Unexpected SaslAuthenticate request: no SASL handshake is under way"}
    try:
        answer["auth_bytes"] = session.authenticate(bytes(body["auth_bytes"]))
    except SaslFailure as e:
        session.failed = True
        return {**answer, "error_code": ErrorCode.SASL_AUTHENTICATION_FAILED, "error_message": str(e)}
    return answer


APIS = [
    Api(17, "SaslHandshake", 0, 1, handshake),
    Api(36, "SaslAuthenticate", 0, 2, authenticate),
]
