"""A quota entity (Kafka's ``ClientQuotaEntity``) and the quota keys a user or client id may have.

An entity is a user, a client id, or a client id of a user; each part is a name or the default
(``None``, stored as ``<default>``).  Values are doubles on the wire; the byte rates are Kafka
LONG configs, so they must be whole numbers, and are stored as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"

# Kafka's QuotaConfig.userAndClientQuotaConfigs: key -> its ConfigDef type.
QUOTA_KEYS: dict[str, str] = {
    PRODUCER_BYTE_RATE: "long",
    CONSUMER_BYTE_RATE: "long",
    REQUEST_PERCENTAGE: "double",
    CONTROLLER_MUTATION_RATE: "double",
}
LONG_MAX = 2**63 - 1

_ABSENT = object()


@dataclass(frozen=True)
class QuotaEntity:
    """``user`` / ``client_id``: a name, None for the default, or not part of the entity (``has_*`` False)."""

    has_user: bool
    user: str | None
    has_client_id: bool
    client_id: str | None

    @classmethod
    def of(cls, user: object = _ABSENT, client_id: object = _ABSENT) -> QuotaEntity:
        """``QuotaEntity.of(user="alice")``, ``of(client_id=None)`` (the default client id)..."""
        return cls(user is not _ABSENT, None if user is _ABSENT else user,  # type: ignore[arg-type]
                   client_id is not _ABSENT, None if client_id is _ABSENT else client_id)  # type: ignore[arg-type]

    def entries(self) -> dict[str, str | None]:
        """Entity type -> name (None: the default), as Kafka's ClientQuotaEntity map."""
        out: dict[str, str | None] = {}
        if self.has_user:
            out[USER] = self.user
        if self.has_client_id:
            out[CLIENT_ID] = self.client_id
        return out

    def describe(self) -> str:
        parts = [f"{t}={'<default>' if n is None else n}" for t, n in self.entries().items()]
        return "ClientQuotaEntity(" + ", ".join(parts) + ")"


def value_problem(key: str, value: float) -> str | None:
    """Kafka's checks of a quota value (ClientQuotaControlManager.validateQuotaKeyValue)."""
    kind = QUOTA_KEYS.get(key)
    if kind is None:
        return f"Invalid configuration key {key}"
    if math.isnan(value) or value <= 0.0:
        return f"Quota {key} must be greater than 0"
    if kind == "long":
        if value > LONG_MAX:
            return f"Proposed value for {key} is too large for a LONG."
        if abs(math.fmod(value, 1.0)) > 1e-6:
            return f"{key} cannot be a fractional value."
    return None


def format_value(key: str, value: float) -> str:
    """A value as the config node keeps it: a LONG as a whole number, a DOUBLE as Java prints it."""
    if QUOTA_KEYS.get(key) == "long":
        return str(int(value + 1e-6))
    return repr(float(value))


def parse_quotas(configs: dict[str, str]) -> dict[str, float]:
    """The quota keys of a config node's configs (a user's node also holds SCRAM credentials)."""
    out: dict[str, float] = {}
    for key, text in configs.items():
        if key in QUOTA_KEYS:
            try:
                out[key] = float(text)
            except ValueError:
                continue  # not a number: written by hand; Kafka would fail to load it, we ignore it
    return out
