"""OAUTHBEARER's client first message (RFC 7628) and Kafka's unsecured token validation."""

from __future__ import annotations

import base64
import json

import pytest

from pykafkad.security.oauthbearer import TokenRefused, bearer_token, validate_unsecured

NOW_MS = 1_800_000_000_000


def _token(claims: dict, alg: str = "none") -> str:
    def segment(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{segment({'alg': alg})}.{segment(claims)}."


def test_first_messages_as_clients_send_them() -> None:
    assert bearer_token(b"n,,\x01auth=Bearer abc.def.\x01\x01") == (None, "abc.def.")
    assert bearer_token(b"n,a=alice,\x01auth=Bearer t\x01traceId=42\x01\x01") == ("alice", "t")
    for bad in (b"n,,auth=Bearer t\x01\x01", b"n,,\x01auth=Basic t\x01\x01", b"y,,\x01auth=Bearer t\x01\x01",
                b"n,,\x01\x01"):
        with pytest.raises(ValueError):
            bearer_token(bad)


def test_unsecured_tokens_as_kafkas_validator_takes_them() -> None:
    exp = NOW_MS / 1000 + 60
    valid = validate_unsecured(_token({"sub": "alice", "exp": exp, "iat": NOW_MS / 1000}), {}, NOW_MS)
    assert (valid.principal, valid.expires_ms) == ("alice", NOW_MS + 60_000)
    assert validate_unsecured(_token({"user": "bob", "exp": exp}),
                              {"unsecuredValidatorPrincipalClaimName": "user"}, NOW_MS).principal == "bob"
    scoped = {"unsecuredValidatorRequiredScope": "read write"}
    assert validate_unsecured(_token({"sub": "a", "exp": exp, "scope": "write read"}), scoped, NOW_MS)
    with pytest.raises(TokenRefused) as refused:
        validate_unsecured(_token({"sub": "a", "exp": exp, "scope": ["read"]}), scoped, NOW_MS)
    assert json.loads(refused.value.status) == {"status": "insufficient_scope", "scope": "read write"}
    # Expired, but within the allowed clock skew.
    late = _token({"sub": "a", "exp": NOW_MS / 1000 - 1})
    assert validate_unsecured(late, {"unsecuredValidatorAllowableClockSkewMs": "5000"}, NOW_MS)
    for bad in (late, _token({"sub": "a"}), _token({"exp": exp}), _token({"sub": "a", "exp": exp}, alg="RS256"),
                _token({"sub": "a", "exp": exp, "iat": NOW_MS / 1000 + 10}), "a.b", "x.y.z", "e30.e30.sig"):
        with pytest.raises(TokenRefused) as refused:
            validate_unsecured(bad, {}, NOW_MS)
        assert json.loads(refused.value.status) == {"status": "invalid_token"}
