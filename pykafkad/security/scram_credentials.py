"""SCRAM credentials as Kafka stores them in ``/config/users/<user>``: per mechanism, the salt, the
stored key, the server key and the iteration count (RFC 5802) - never the password.

``kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]'`` sends AlterUserScramCredentials
with a salt and the salted password it computed; the broker keeps only the keys derived from it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

# Kafka's ScramMechanism ids in AlterUserScramCredentials and DescribeUserScramCredentials.
MECHANISM_IDS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
MECHANISM_NUMBERS = {name: number for number, name in MECHANISM_IDS.items()}
_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
# Kafka's minimum and maximum iterations.
MIN_ITERATIONS = {"SCRAM-SHA-256": 4096, "SCRAM-SHA-512": 4096}
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def encode(self) -> str:
        """Kafka's ``ScramCredentialUtils.credentialToString``."""
        b64 = base64.b64encode
        return (f"salt={b64(self.salt).decode()},stored_key={b64(self.stored_key).decode()},"
                f"server_key={b64(self.server_key).decode()},iterations={self.iterations}")


def decode(text: str) -> ScramCredential:
    fields = dict(part.split("=", 1) for part in text.split(","))
    return ScramCredential(base64.b64decode(fields["salt"]), base64.b64decode(fields["stored_key"]),
                           base64.b64decode(fields["server_key"]), int(fields["iterations"]))


def from_salted_password(mechanism: str, salt: bytes, salted_password: bytes, iterations: int) -> ScramCredential:
    """The credential a client's salted password gives: StoredKey = H(HMAC(SaltedPassword, "Client Key")),
    ServerKey = HMAC(SaltedPassword, "Server Key")."""
    digest = _HASHES[mechanism]
    client_key = hmac.new(salted_password, b"Client Key", digest).digest()
    server_key = hmac.new(salted_password, b"Server Key", digest).digest()
    return ScramCredential(salt, digest(client_key).digest(), server_key, iterations)
