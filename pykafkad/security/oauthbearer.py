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
import math
import re
import time
from dataclasses import dataclass

# The client's first message: a GS2 header and ^A, then key=value pairs each ended by ^A, then ^A.
_INITIAL_RESPONSE = re.compile(
    r"n,(?:a=(?P<authzid>[^,]*))?,\x01(?P<kvpairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]*\x01)*)\x01")
CONTROL_A = b"\x01"
# Longer tokens are refused before they are decoded (Kafka's own tokens are a few hundred bytes).
MAX_TOKEN_CHARS = 64 * 1024


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
    except (ValueError, TypeError, RecursionError) as e:
        raise TokenRefused(f"not a JSON web token segment: {type(e).__name__}") from None
    if not isinstance(value, dict):
        raise TokenRefused("a JSON web token segment is not a JSON object")
    return value


def _time_claim(value: object) -> bool:
    """A NumericDate: seconds as a finite number, within what milliseconds in 64 bits can hold."""
    return (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            and abs(value) < 9e15)


def validate_unsecured(token: str, options: dict[str, str], now_ms: int | None = None) -> ValidToken:
    """The principal and expiry of an unsecured JWS compact token; TokenRefused says why not."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    if len(token) > MAX_TOKEN_CHARS:
        raise TokenRefused(f"the token is longer than {MAX_TOKEN_CHARS} characters")
    parts = token.split(".")
    if len(parts) != 3 or parts[2]:
        raise TokenRefused("an unsecured JWS has three dot-separated parts and no signature")
    header, claims = _segment(parts[0]), _segment(parts[1])
    if header.get("alg") != "none":
        raise TokenRefused(f"unsecured tokens only (alg none), got alg {header.get('alg')!r}")
    skew_text = options.get("unsecuredValidatorAllowableClockSkewMs", "0") or "0"
    skew = int(skew_text) if skew_text.isascii() and skew_text.isdigit() else 0
    principal = claims.get(options.get("unsecuredValidatorPrincipalClaimName", "sub") or "sub")
    if not isinstance(principal, str) or not principal.strip():
        raise TokenRefused("no principal claim")
    exp = claims.get("exp")
    if not _time_claim(exp):
        raise TokenRefused("no exp claim (a finite number of seconds)")
    expires_ms = int(exp * 1000)
    if now_ms >= expires_ms + skew:
        raise TokenRefused("the token has expired")
    iat = claims.get("iat")
    if iat is not None and not _time_claim(iat):
        raise TokenRefused("the iat claim is not a finite number of seconds")
    # Whole milliseconds on both sides: a token made within the current millisecond is not "future".
    if iat is not None and int(iat * 1000) > now_ms + skew:
        raise TokenRefused("the token was issued in the future")
    required = [s for s in re.split(r"[ ,]+", options.get("unsecuredValidatorRequiredScope", "")) if s]
    if required:
        granted = claims.get(options.get("unsecuredValidatorScopeClaimName", "scope") or "scope", [])
        granted = granted.split() if isinstance(granted, str) else granted if isinstance(granted, list) else []
        missing = [s for s in required if s not in granted]
        if missing:
            raise TokenRefused(f"missing scope {', '.join(missing)}", scope=" ".join(required))
    return ValidToken(principal.strip(), expires_ms)
