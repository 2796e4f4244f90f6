"""Client-metrics subscriptions (KIP-714): the CLIENT_METRICS config resource that
``kafka-client-metrics.sh`` creates, describes, lists and deletes.

A subscription is a named set of three keys: ``metrics`` (metric name prefixes to collect),
``interval.ms`` (how often clients would push them) and ``match`` (which clients: ``key=regex``
pairs on the client instance id, client id, software name and version, source address and port).
This module owns their definitions, defaults and Kafka 4.4's validation, with Kafka's error codes
and words.  The subscriptions are stored in ``/config/client-metrics/<name>`` and replicated like
topic configs (``ClusterMetadata.client_metrics``).

Kafka only serves the telemetry APIs themselves (GetTelemetrySubscriptions, PushTelemetry) when a
metrics reporter that receives client telemetry is configured, which a broker has not by default;
pykafkad does not serve them (docs/compatibility.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.errors import KafkaError
from pykafkad.regular_expression import whole_name_matcher
from pykafkad.topic_config import ConfigType
from wire.error_codes import ErrorCode

INTERVAL_MS, MATCH, METRICS = "interval.ms", "match", "metrics"
INTERVAL_MIN_MS, INTERVAL_MAX_MS = 100, 3_600_000
# The client properties a ``match`` entry may test.
MATCH_KEYS = frozenset({"client_instance_id", "client_id", "client_software_name", "client_software_version",
                        "client_source_address", "client_source_port"})

@dataclass(frozen=True)
class SubscriptionKey:
    name: str
    default: str
    config_type: ConfigType


# In the order Kafka describes them.
KEYS = (
    SubscriptionKey(INTERVAL_MS, "300000", ConfigType.INT),
    SubscriptionKey(MATCH, "", ConfigType.LIST),
    SubscriptionKey(METRICS, "", ConfigType.LIST),
)
KEY_NAMES = frozenset(k.name for k in KEYS)


def validate_subscription(name: str, configs: dict[str, str | None]) -> dict[str, str]:
    """The subscription's complete set of keys, checked as Kafka 4.4's controller checks them;
    a KafkaError with Kafka's code and message otherwise."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in KEY_NAMES:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    clean = {k: (v or "").strip() for k, v in configs.items()}
    if INTERVAL_MS in clean:
        raw = clean[INTERVAL_MS]
        try:
            interval = int(raw)
        except ValueError:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {raw} for configuration {INTERVAL_MS}: "
                             "Not a number of type INT") from None
        if not INTERVAL_MIN_MS <= interval <= INTERVAL_MAX_MS:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Invalid value {raw} for {INTERVAL_MS}, interval must be "
                             f"between {INTERVAL_MIN_MS} and {INTERVAL_MAX_MS} (1 hour)")
    if clean.get(MATCH):
        for entry in (e.strip() for e in clean[MATCH].split(",")):
            if not _valid_match(entry):
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {clean[MATCH]}")
    return clean


def _valid_match(entry: str) -> bool:
    """``key=regex`` with a key clients are matched on and a pattern RE2 takes (Kafka's matcher is
    re2j, so a lookbehind, which java.util.regex would take, is refused)."""
    key, sep, pattern = entry.partition("=")
    if not sep or key.strip() not in MATCH_KEYS or not pattern:
        return False
    try:
        whole_name_matcher(pattern)
    except KafkaError:
        return False
    return True
