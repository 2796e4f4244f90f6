"""SASL/OAUTHBEARER (RFC 7628, KIP-255) with Kafka's default server side: unsecured JWS tokens
(``"alg":"none"``, no signature), validated as Kafka's ``OAuthBearerUnsecuredValidatorCallbackHandler``
validates them.  For development and tests, as in Kafka; a token's ``sub`` claim is the principal.

The listener's JAAS options tune the validation, with Kafka's names:
``unsecuredValidatorPrincipalClaimName`` (``sub``), ``unsecuredValidatorScopeClaimName`` (``scope``),
``unsecuredValidatorRequiredScope`` (none) and ``unsecuredValidatorAllowableClockSkewMs`` (0).
"""

from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import dataclass

# The client's first message: a GS2 header and ^A, then key=value pairs each ended by ^A, then ^A.
_INITIAL_RESPONSE = re.compile(
    r"n,(?:a=(?P<authzid>[^,]*))?,\x01(?P<kvpairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]*\x01)*)\x01")
CONTROL_A = b"\x01"


class TokenRefused(Exception):
    """The token is not valid; ``status`` is the RFC 7628 error JSON sent back to the client."""

    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        error = {"status": "invalid_token"}
        if scope is not None:
            error = {"status": "insufficient_scope", "scope": scope}
        self.status = json.dumps(error, separators=(",", ":"))


@dataclass(frozen=True)
class ValidToken:
    principal: str
    expires_ms: int


def bearer_token(response: bytes) -> tuple[str | None, str]:
    """The authorization id and the token of the client's first message; ValueError if malformed."""
    text = response.decode("utf-8")
    match = _INITIAL_RESPONSE.fullmatch(text)
    if match is None:
        raise ValueError("Invalid OAUTHBEARER client first message")
    pairs = dict(kv.split("=", 1) for kv in match.group("kvpairs").split("\x01") if kv)
    auth = pairs.get("auth", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ValueError("Invalid OAUTHBEARER client first message: no Bearer token")
    return match.group("authzid") or None, token.strip()


def _segment(text: str) -> dict:
    try:
        value = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, TypeError) as e:
        raise TokenRefused(f"not a JSON web token segment: {e}") from None
    if not isinstance(value, dict):
        raise TokenRefused("a JSON web token segment is not a JSON object")
    return value


def validate_unsecured(token: str, options: dict[str, str], now_ms: int | None = None) -> ValidToken:
    """The principal and expiry of an unsecured JWS compact token; TokenRefused says why not."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    parts = token.split(".")
    if len(parts) != 3 or parts[2]:
        raise TokenRefused("an unsecured JWS has three dot-separated parts and no signature")
    header, claims = _segment(parts[0]), _segment(parts[1])
    if header.get("alg") != "none":
        raise TokenRefused(f"unsecured tokens only (alg none), got alg {header.get('alg')!r}")
    skew = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0") or 0)
    principal = claims.get(options.get("unsecuredValidatorPrincipalClaimName", "sub") or "sub")
    if not isinstance(principal, str) or not principal.strip():
        raise TokenRefused("no principal claim")
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        raise TokenRefused("no exp claim")
    expires_ms = int(exp * 1000)
    if now_ms >= expires_ms + skew:
        raise TokenRefused("the token has expired")
    iat = claims.get("iat")
    # Whole milliseconds on both sides: a token made within the current millisecond is not "future".
    if isinstance(iat, int | float) and not isinstance(iat, bool) and int(iat * 1000) > now_ms + skew:
        raise TokenRefused("the token was issued in the future")
    required = [s for s in re.split(r"[ ,]+", options.get("unsecuredValidatorRequiredScope", "")) if s]
    if required:
        granted = claims.get(options.get("unsecuredValidatorScopeClaimName", "scope") or "scope", [])
        granted = granted.split() if isinstance(granted, str) else granted if isinstance(granted, list) else []
        missing = [s for s in required if s not in granted]
        if missing:
            raise TokenRefused(f"missing scope {', '.join(missing)}", scope=" ".join(required))
    return ValidToken(principal.strip(), expires_ms)
