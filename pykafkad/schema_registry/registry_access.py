"""Who may use the registry of a broker that has an authorizer, and for what.

Every request carries HTTP Basic credentials, checked against the broker's own SASL users: the
PLAIN users of its SASL listeners' JAAS configs (``user_alice="..."``) and the SCRAM credentials
stored for the cluster (``kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]'``).
Each request is then authorized by the broker's ACLs, on the topic a subject belongs to
(``orders-value`` and ``orders-key`` belong to ``orders``; any other subject to the topic of its own
name): reading a subject needs DESCRIBE, changing it WRITE, and changing the global level or mode
ALTER_CONFIGS on the cluster.  A registry without an authorizer asks nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import TYPE_CHECKING

from pykafkad.security.acl import CLUSTER_NAME, Operation, ResourceType
from pykafkad.security.sasl import jaas_options
from pykafkad.security.scram_credentials import from_salted_password

if TYPE_CHECKING:
    from pykafkad.broker import Broker

SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


def subject_topic(subject: str) -> str:
    """The topic whose ACLs decide who may use ``subject``."""
    for suffix in ("-value", "-key"):
        if subject.endswith(suffix) and len(subject) > len(suffix):
            return subject.removesuffix(suffix)
    return subject


class RegistryAccess:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def authenticate(self, header: str | None) -> str | None:
        """The principal (``User:alice``) the ``Authorization`` header proves, or None."""
        if not header or not header[:6].lower() == "basic ":
            return None
        try:
            user, sep, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        if not sep or not user:
            return None
        if self._plain_user(user, password) or self._scram_user(user, password):
            return f"User:{user}"
        return None

    def login_mechanism(self, user: str, password: str) -> str | None:
        """The SASL mechanism these credentials log in with (PLAIN, SCRAM-SHA-256 or -512), or None."""
        if self._plain_user(user, password):
            return "PLAIN"
        return self._scram_mechanism(user, password)

    def _plain_user(self, user: str, password: str) -> bool:
        config = self.broker.config
        for listener in config.listeners:
            if "SASL" not in listener.security_protocol:
                continue
            expected = jaas_options(config, listener.name, "PLAIN").get(f"user_{user}")
            if expected is not None and hmac.compare_digest(expected.encode(), password.encode()):
                return True
        return False

    def _scram_user(self, user: str, password: str) -> bool:
        return self._scram_mechanism(user, password) is not None

    def _scram_mechanism(self, user: str, password: str) -> str | None:
        for mechanism, digest in SCRAM_HASHES.items():
            stored = self.broker.scram_credential(user, mechanism)
            if stored is None:
                continue
            salted = hashlib.pbkdf2_hmac(digest, password.encode(), stored.salt, stored.iterations)
            given = from_salted_password(mechanism, stored.salt, salted, stored.iterations)
            if hmac.compare_digest(given.stored_key, stored.stored_key):
                return mechanism
        return None

    def may(self, principal: str, host: str, operation: Operation, subject: str | None,
            log_denial: bool = True) -> bool:
        """Whether ``principal`` may ``operation`` on ``subject`` (None: the registry's global settings,
        decided on the cluster)."""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        if subject is None:
            return authorizer.authorize(principal, host, operation, ResourceType.CLUSTER, CLUSTER_NAME, log_denial)
        return authorizer.authorize(principal, host, operation, ResourceType.TOPIC, subject_topic(subject),
                                    log_denial)
