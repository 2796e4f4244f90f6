"""SASL on a connection (SaslHandshake, SaslAuthenticate): PLAIN, SCRAM-SHA-256/512 and
OAUTHBEARER (unsecured tokens, ``security/oauthbearer.py``), as Kafka's brokers serve them.

PLAIN checks the user against the listener's JAAS config, Kafka's
``listener.name.<listener>.plain.sasl.jaas.config`` (or ``sasl.jaas.config``):
``org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";``.
SCRAM checks the client's proof against the user's stored credential (``/config/users/<user>``)
through scramp, a well-kept SCRAM library; a failed exchange says why in one line, without telling
whether the user exists.
"""

from __future__ import annotations

import hmac
import logging
import re
import time
from collections.abc import Callable

from pykafkad.config import BrokerConfig
from pykafkad.security import oauthbearer, scram_credentials

log = logging.getLogger(__name__)

_JAAS_OPTION = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*"((?:[^"\\]|\\.)*)"')


class SaslFailure(Exception):
    """Authentication failed; the message is the client's (SASL_AUTHENTICATION_FAILED)."""


def jaas_options(config: BrokerConfig, listener: str, mechanism: str) -> dict[str, str]:
    """The JAAS login module options for ``mechanism`` on ``listener``: the listener's own
    ``listener.name.<listener>.<mechanism>.sasl.jaas.config``, else ``sasl.jaas.config``."""
    own = config.listener_props.get(f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config")
    text = own if own is not None else config["sasl.jaas.config"] or ""
    return dict(_JAAS_OPTION.findall(text))


class SaslSession:
    """One connection's authentication: the mechanism chosen by SaslHandshake, then the exchange."""

    def __init__(self, config: BrokerConfig, listener: str,
                 scram_credential: Callable[[str, str], scram_credentials.ScramCredential | None]) -> None:
        self.config = config
        self.listener = listener
        self.enabled = list(config["sasl.enabled.mechanisms"])
        self._scram_credential = scram_credential
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._scram_server = None
        self._scram_user = ""
        # SaslHandshake v0: the tokens come as raw frames, not SaslAuthenticate requests.
        self.raw_tokens = False
        # The exchange failed: the connection closes once the answer is sent.
        self.failed = False
        # KIP-368: when the authenticated session ends (monotonic seconds), unless re-authenticated.
        self.expires_at: float | None = None
        self._reauth_principal: str | None = None
        # OAUTHBEARER: the refusal sent as a challenge, which the client acknowledges with ^A.
        self._oauth_refusal: str | None = None
        # When the credential itself expires (an OAUTHBEARER token's exp), in epoch ms.
        self.credential_expires_ms: int | None = None

    @property
    def authenticated(self) -> bool:
        return self.principal is not None

    @property
    def reauthenticating(self) -> bool:
        return self._reauth_principal is not None

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and time.monotonic() >= self.expires_at

    def may_handshake(self) -> bool:
        """A first handshake, or a re-authentication (KIP-368) once authenticated with SaslAuthenticate."""
        return self.mechanism is None or (self.authenticated and not self.reauthenticating and not self.raw_tokens)

    @property
    def exchanging(self) -> bool:
        """A mechanism is chosen and its exchange is not over."""
        return self.mechanism is not None and (not self.authenticated or self.reauthenticating)

    def handshake(self, mechanism: str) -> bool:
        """Choose ``mechanism`` (again, to re-authenticate); False when it is not enabled."""
        if mechanism not in self.enabled:
            return False
        if self.authenticated:
            # Re-authentication: the same principal must come out of it; the session goes on meanwhile.
            self._reauth_principal = self.principal
            self._scram_server = None
        self.mechanism = mechanism
        return True

    def session_lifetime_ms(self) -> int:
        """After a successful exchange: how long the session lasts (``connections.max.reauth.ms``, 0
        for ever), which the client re-authenticates within."""
        lifetime = self.config["connections.max.reauth.ms"]
        if lifetime > 0 and self.credential_expires_ms is not None:
            # KIP-368: no longer than the token is valid.
            lifetime = max(0, min(lifetime, self.credential_expires_ms - int(time.time() * 1000)))
        self.expires_at = time.monotonic() + lifetime / 1000 if lifetime > 0 else None
        return lifetime

    def _succeeded(self, principal: str) -> None:
        if self._reauth_principal is not None and principal != self._reauth_principal:
            raise SaslFailure(f"Cannot change principals during re-authentication from User:{self._reauth_principal}"
                              f": User:{principal}")
        self._reauth_principal = None
        self.principal = principal

    def authenticate(self, token: bytes) -> bytes:
        """Take the client's next token; the server's answer (empty when none is due).  Sets
        ``principal`` once the exchange succeeds; SaslFailure when it fails."""
        if self.mechanism == "PLAIN":
            return self._plain(token)
        if self.mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            return self._scram(token)
        if self.mechanism == "OAUTHBEARER":
            return self._oauthbearer(token)
        raise SaslFailure("Unexpected SASL token: no mechanism was chosen with SaslHandshake")

    def _plain(self, token: bytes) -> bytes:
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise SaslFailure("Invalid SASL/PLAIN response: expected 3 tokens")
        authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
        if not user:
            raise SaslFailure("Authentication failed: username not specified")
        if authzid and authzid != user:
            raise SaslFailure("Authentication failed: Client requested an authorization id that is different "
                              "from username")
        expected = jaas_options(self.config, self.listener, "PLAIN").get(f"user_{user}")
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslFailure("Authentication failed: Invalid username or password")
        self._succeeded(user)
        return b""

    def _oauthbearer(self, token: bytes) -> bytes:
        if self._oauth_refusal is not None:
            # RFC 7628: after our error the client sends ^A, and the exchange fails with that error.
            refusal, self._oauth_refusal = self._oauth_refusal, None
            raise SaslFailure(refusal)
        try:
            authzid, bearer = oauthbearer.bearer_token(token)
        except (ValueError, UnicodeDecodeError) as e:
            raise SaslFailure(str(e)) from None
        try:
            valid = oauthbearer.validate_unsecured(bearer, jaas_options(self.config, self.listener, "OAUTHBEARER"))
        except oauthbearer.TokenRefused as e:
            log.info("OAUTHBEARER token refused on %s: %s", self.listener, e)
            self._oauth_refusal = e.status
            return e.status.encode()
        if authzid is not None and authzid != valid.principal:
            raise SaslFailure(f"Authentication failed: Client requested an authorization id ({authzid}) that is "
                              f"different from the token's principal name ({valid.principal})")
        self.credential_expires_ms = valid.expires_ms
        self._succeeded(valid.principal)
        return b""

    def _scram(self, token: bytes) -> bytes:
        # scramp (with asn1crypto) is about 35 ms of a broker's start; only SCRAM listeners need it.
        from scramp import ScramException, ScramMechanism

        assert self.mechanism is not None
        try:
            if self._scram_server is None:
                mechanism = self.mechanism

                def lookup(user: str) -> tuple[bytes, bytes, bytes, int]:
                    self._scram_user = user
                    credential = self._scram_credential(_saslname(user), mechanism)
                    if credential is None:
                        raise SaslFailure(f"Authentication failed during authentication due to invalid "
                                          f"credentials with SASL mechanism {mechanism}")
                    return credential.salt, credential.stored_key, credential.server_key, credential.iterations

                self._scram_server = ScramMechanism(mechanism).make_server(lookup)
                self._scram_server.set_client_first(token.decode("utf-8"))
                return self._scram_server.get_server_first().encode()
            self._scram_server.set_client_final(token.decode("utf-8"))
            answer = self._scram_server.get_server_final().encode()
            self._succeeded(_saslname(self._scram_user))
            return answer
        except ScramException as e:
            raise SaslFailure(f"Authentication failed during authentication due to invalid credentials with SASL "
                              f"mechanism {self.mechanism}") from e
        except (UnicodeDecodeError, ValueError) as e:
            raise SaslFailure(f"Invalid SCRAM message: {e}") from e


def _saslname(name: str) -> str:
    """RFC 5802's saslname decoded: ``=2C`` is a comma, ``=3D`` an equals sign."""
    return name.replace("=2C", ",").replace("=3D", "=")
