"""Per-group configs (KIP-848, KIP-932, KIP-1071): the GROUP config resource (type 32) that
``kafka-configs.sh --entity-type groups`` alters and describes.

A group config overrides, for one group, a broker-wide ``group.*`` setting: the consumer
protocol's session timeout and heartbeat interval, the share groups' and the streams groups'
settings.  This module owns Kafka 4.4's keys (``GroupConfig``), their types, their defaults and
broker synonyms, and Kafka's validation of a group's whole set of keys against the broker's
``group.*.min.*``/``max.*`` bounds, with Kafka's error codes and words.  The configs are stored in
``/config/groups/<sanitized group id>`` and replicated like topic configs
(``ClusterMetadata.group_configs``); pykafkad's consumer-protocol groups read
``consumer.session.timeout.ms`` and ``consumer.heartbeat.interval.ms`` from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pykafkad.config import KEYS as BROKER_KEYS
from pykafkad.config import render_value
from pykafkad.errors import KafkaError
from pykafkad.topic_config import ConfigSource, ConfigType, EffectiveConfig, Synonym
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig

# DescribeConfigs' config source of a key set on the group (Kafka's ConfigSource.GROUP_CONFIG,
# "DYNAMIC_GROUP_CONFIG" in kafka-configs.sh); topic_config.ConfigSource stops at 7.
GROUP_CONFIG_SOURCE = 8

CONSUMER_SESSION_TIMEOUT_MS = "consumer.session.timeout.ms"
CONSUMER_HEARTBEAT_INTERVAL_MS = "consumer.heartbeat.interval.ms"
STREAMS_RACK_AWARE_ASSIGNMENT_TAGS = "streams.rack.aware.assignment.tags"
STREAMS_ASSIGNOR_NAME = "streams.assignor.name"
DLQ_TOPIC_NAME = "errors.deadletterqueue.topic.name"
SHARE_AUTO_OFFSET_RESET = "share.auto.offset.reset"


@dataclass(frozen=True)
class GroupConfigKey:
    name: str
    config_type: ConfigType
    # GroupConfig's own default: what a key without a broker synonym describes.
    default: str
    # The broker config a group without the key falls back to (GroupConfig's synonyms).
    broker_synonym: str | None = None
    at_least: int | None = None
    one_of: tuple[str, ...] | None = None
    # Kafka's defineInternal keys: accepted, described only where set.
    internal: bool = False


_INT, _LONG, _BOOL = ConfigType.INT, ConfigType.LONG, ConfigType.BOOLEAN
_STR, _LIST = ConfigType.STRING, ConfigType.LIST

# In GroupConfig's definition order, which is the order Kafka parses (and so refuses) them in.
KEYS = (
    GroupConfigKey(CONSUMER_SESSION_TIMEOUT_MS, _INT, "45000", "group.consumer.session.timeout.ms", 1),
    GroupConfigKey(CONSUMER_HEARTBEAT_INTERVAL_MS, _INT, "5000", "group.consumer.heartbeat.interval.ms", 1),
    GroupConfigKey("consumer.assignment.interval.ms", _INT, "1000", "group.consumer.assignment.interval.ms", 0),
    GroupConfigKey("consumer.assignor.offload.enable", _BOOL, "true", "group.consumer.assignor.offload.enable",
                   internal=True),
    GroupConfigKey("share.session.timeout.ms", _INT, "45000", "group.share.session.timeout.ms", 1),
    GroupConfigKey("share.heartbeat.interval.ms", _INT, "5000", "group.share.heartbeat.interval.ms", 1),
    GroupConfigKey("share.record.lock.duration.ms", _INT, "30000", "group.share.record.lock.duration.ms", 1000),
    GroupConfigKey("share.delivery.count.limit", _INT, "5", "group.share.delivery.count.limit", 2),
    GroupConfigKey("share.partition.max.record.locks", _INT, "2000", "group.share.partition.max.record.locks", 100),
    GroupConfigKey(SHARE_AUTO_OFFSET_RESET, _STR, "latest"),
    GroupConfigKey("share.isolation.level", _STR, "read_uncommitted", one_of=("read_committed", "read_uncommitted")),
    GroupConfigKey("share.renew.acknowledge.enable", _BOOL, "true"),
    GroupConfigKey("share.assignment.interval.ms", _INT, "1000", "group.share.assignment.interval.ms", 0),
    GroupConfigKey("share.assignor.offload.enable", _BOOL, "true", "group.share.assignor.offload.enable",
                   internal=True),
    GroupConfigKey("streams.session.timeout.ms", _INT, "45000", "group.streams.session.timeout.ms", 1),
    GroupConfigKey("streams.heartbeat.interval.ms", _INT, "5000", "group.streams.heartbeat.interval.ms", 1),
    GroupConfigKey("streams.num.standby.replicas", _INT, "0", "group.streams.num.standby.replicas", 0),
    GroupConfigKey("streams.initial.rebalance.delay.ms", _INT, "3000", "group.streams.initial.rebalance.delay.ms", 0),
    GroupConfigKey("streams.assignment.interval.ms", _INT, "1000", "group.streams.assignment.interval.ms", 0),
    GroupConfigKey("streams.assignor.offload.enable", _BOOL, "true", "group.streams.assignor.offload.enable",
                   internal=True),
    GroupConfigKey("streams.task.offset.interval.ms", _INT, "60000", "group.streams.task.offset.interval.ms", 1,
                   internal=True),
    GroupConfigKey("streams.num.warmup.replicas", _INT, "2", "group.streams.num.warmup.replicas", 0, internal=True),
    GroupConfigKey(STREAMS_RACK_AWARE_ASSIGNMENT_TAGS, _LIST, "", "group.streams.rack.aware.assignment.tags"),
    GroupConfigKey("streams.acceptable.recovery.lag", _LONG, "10000", "group.streams.acceptable.recovery.lag", 0,
                   internal=True),
    GroupConfigKey(STREAMS_ASSIGNOR_NAME, _STR, "", "group.streams.assignors"),
    GroupConfigKey(DLQ_TOPIC_NAME, _STR, ""),
    GroupConfigKey("errors.deadletterqueue.copy.record.enable", _BOOL, "false"),
)
KEYS_BY_NAME = {k.name: k for k in KEYS}

# The order Kafka 4.4 describes a group's keys in: its java.util.HashMap's of the 27 keys (by
# String.hashCode, 32 buckets), the internal keys set on the group coming first.
DESCRIBE_ORDER = (
    "consumer.session.timeout.ms", "streams.assignor.name", "consumer.assignment.interval.ms",
    "errors.deadletterqueue.copy.record.enable", "share.auto.offset.reset", "streams.rack.aware.assignment.tags",
    "share.assignor.offload.enable", "share.renew.acknowledge.enable", "streams.initial.rebalance.delay.ms",
    "share.session.timeout.ms", "streams.assignment.interval.ms", "streams.num.warmup.replicas",
    "consumer.assignor.offload.enable", "share.heartbeat.interval.ms", "streams.heartbeat.interval.ms",
    "share.delivery.count.limit", "streams.acceptable.recovery.lag", "errors.deadletterqueue.topic.name",
    "consumer.heartbeat.interval.ms", "share.record.lock.duration.ms", "share.assignment.interval.ms",
    "streams.assignor.offload.enable", "share.isolation.level", "streams.session.timeout.ms",
    "share.partition.max.record.locks", "streams.num.standby.replicas", "streams.task.offset.interval.ms",
)
assert sorted(DESCRIBE_ORDER) == sorted(KEYS_BY_NAME), "DESCRIBE_ORDER must name every group config once"

# Kafka's defaults of the broker configs group configs fall back to or are bounded by, for those
# pykafkad's broker config does not have (it has the consumer protocol's; share and streams groups
# are not served, so their settings are fixed at Kafka's defaults).
KAFKA_BROKER_DEFAULTS: dict[str, str] = {
    "group.consumer.assignor.offload.enable": "true",
    "group.consumer.min.assignment.interval.ms": "0",
    "group.consumer.max.assignment.interval.ms": "15000",
    "group.share.session.timeout.ms": "45000",
    "group.share.min.session.timeout.ms": "45000",
    "group.share.max.session.timeout.ms": "60000",
    "group.share.heartbeat.interval.ms": "5000",
    "group.share.min.heartbeat.interval.ms": "5000",
    "group.share.max.heartbeat.interval.ms": "15000",
    "group.share.assignment.interval.ms": "1000",
    "group.share.min.assignment.interval.ms": "0",
    "group.share.max.assignment.interval.ms": "15000",
    "group.share.assignor.offload.enable": "true",
    "group.streams.session.timeout.ms": "45000",
    "group.streams.min.session.timeout.ms": "45000",
    "group.streams.max.session.timeout.ms": "60000",
    "group.streams.heartbeat.interval.ms": "5000",
    "group.streams.min.heartbeat.interval.ms": "5000",
    "group.streams.max.heartbeat.interval.ms": "15000",
    "group.streams.num.standby.replicas": "0",
    "group.streams.max.standby.replicas": "2",
    "group.streams.initial.rebalance.delay.ms": "3000",
    "group.streams.assignment.interval.ms": "1000",
    "group.streams.min.assignment.interval.ms": "0",
    "group.streams.max.assignment.interval.ms": "15000",
    "group.streams.assignor.offload.enable": "true",
    "group.streams.task.offset.interval.ms": "60000",
    "group.streams.min.task.offset.interval.ms": "15000",
    "group.streams.num.warmup.replicas": "2",
    "group.streams.max.warmup.replicas": "20",
    "group.streams.rack.aware.assignment.tags": "",
    "group.streams.acceptable.recovery.lag": "10000",
    "group.streams.assignors": "sticky",
}

# (key, broker min, broker max) checked after parsing, in Kafka's order; None: no bound that side.
_BOUNDS = (
    (CONSUMER_HEARTBEAT_INTERVAL_MS, "group.consumer.min.heartbeat.interval.ms",
     "group.consumer.max.heartbeat.interval.ms"),
    (CONSUMER_SESSION_TIMEOUT_MS, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    ("consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms",
     "group.consumer.max.assignment.interval.ms"),
    ("share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    ("share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
     "group.share.max.record.lock.duration.ms"),
    ("share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
    ("share.partition.max.record.locks", "group.share.min.partition.max.record.locks",
     "group.share.max.partition.max.record.locks"),
    ("share.assignment.interval.ms", "group.share.min.assignment.interval.ms",
     "group.share.max.assignment.interval.ms"),
    ("streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms",
     "group.streams.max.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    ("streams.num.standby.replicas", None, "group.streams.max.standby.replicas"),
    ("streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms",
     "group.streams.max.assignment.interval.ms"),
    ("streams.task.offset.interval.ms", "group.streams.min.task.offset.interval.ms", None),
    ("streams.num.warmup.replicas", None, "group.streams.max.warmup.replicas"),
)
# (session key, heartbeat key) of each protocol: a group's session must outlast its heartbeat.
_SESSION_OVER_HEARTBEAT = (
    (CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS),
    ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"),
)
# java.time.Duration's text form, which ``by_duration:`` takes (ISO-8601 days to seconds).
_DURATION = re.compile(r"[-+]?P(?:[-+]?[0-9]+D)?(?:T(?:[-+]?[0-9]+H)?(?:[-+]?[0-9]+M)?"
                       r"(?:[-+]?[0-9]+(?:[.,][0-9]{0,9})?S)?)?", re.IGNORECASE)
_INT_RANGE = (-(2 ** 31), 2 ** 31 - 1)
_LONG_RANGE = (-(2 ** 63), 2 ** 63 - 1)


def broker_setting(config: BrokerConfig, key: str) -> str:
    """A broker ``group.*`` config's value: pykafkad's where it has the key, else Kafka's default."""
    if key in BROKER_KEYS:
        return render_value(config[key]) or ""
    return KAFKA_BROKER_DEFAULTS[key]


def _invalid(raw: str, key: str, why: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {raw} for configuration {key}: {why}")


def _parse(key: GroupConfigKey, raw: str) -> int | str | bool | list[str]:
    """One value as Kafka's ConfigDef parses and checks it (trimmed first)."""
    text = raw.strip()
    if key.config_type in (ConfigType.INT, ConfigType.LONG):
        low, high = _INT_RANGE if key.config_type == ConfigType.INT else _LONG_RANGE
        kind = "INT" if key.config_type == ConfigType.INT else "LONG"
        try:
            number = int(text)
        except ValueError:
            number = None
        if number is None or not low <= number <= high or not re.fullmatch(r"[-+]?[0-9]+", text):
            raise _invalid(raw, key.name, f"Not a number of type {kind}")
        if key.at_least is not None and number < key.at_least:
            raise _invalid(raw, key.name, f"Value must be at least {key.at_least}")
        return number
    if key.config_type == ConfigType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise _invalid(raw, key.name, "Expected value to be either true or false")
        return text.lower() == "true"
    if key.config_type == ConfigType.LIST:
        return [item for item in re.split(r"\s*,\s*", text) if item] if text else []
    if key.one_of is not None and text not in key.one_of:
        raise _invalid(raw, key.name, f"String must be one of: {', '.join(key.one_of)}")
    if key.name == SHARE_AUTO_OFFSET_RESET and not _valid_reset(text):
        raise _invalid(raw, key.name, f"Invalid value `{text}` for configuration {key.name}. The value must be "
                                      "either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")
    return text


def _valid_reset(text: str) -> bool:
    if text.lower() in ("earliest", "latest"):
        return True
    prefix, _, duration = text.partition(":")
    # A negative duration is refused, as Kafka refuses it.
    return (prefix.lower() == "by_duration" and _DURATION.fullmatch(duration) is not None
            and not duration.startswith("-") and "-" not in duration)


_DURATION_PARTS = re.compile(r"P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
                             re.IGNORECASE)


def reset_duration_ms(reset: str) -> int | None:
    """The milliseconds of a ``by_duration:<ISO-8601 duration>`` reset, None for any other."""
    prefix, _, text = reset.partition(":")
    found = _DURATION_PARTS.fullmatch(text.replace("+", "")) if prefix.lower() == "by_duration" else None
    if found is None:
        return None
    days, hours, minutes, seconds, fraction = (found.group(i) or "0" for i in range(1, 6))
    whole_s = ((int(days) * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(seconds)
    return whole_s * 1000 + int(fraction.ljust(3, "0")[:3])


def validate_group_configs(group: str, configs: dict[str, str | None], broker: BrokerConfig) -> dict[str, str]:
    """The group's complete new set of keys, checked as Kafka 4.4 checks them (names, then each
    value's type and lower bound in definition order, then the broker's bounds); a KafkaError with
    Kafka's code and message otherwise."""
    if not group:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    for name, value in configs.items():
        if value is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {name}")
    values = {k: v for k, v in configs.items() if v is not None}
    for name in values:
        if name not in KEYS_BY_NAME:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
    tags = values.get(STREAMS_RACK_AWARE_ASSIGNMENT_TAGS)
    if tags is not None and tags.strip():
        items = re.split(r"\s*,\s*", tags.strip())
        if len(set(items)) != len(items):
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             f"{STREAMS_RACK_AWARE_ASSIGNMENT_TAGS} must not contain duplicate tag keys.")
    parsed = {key.name: _parse(key, values[key.name]) for key in KEYS if key.name in values}
    for name, low_key, high_key in _BOUNDS:
        if name not in parsed:
            continue
        number = parsed[name]
        assert isinstance(number, int)
        low = int(broker_setting(broker, low_key)) if low_key else None
        high = int(broker_setting(broker, high_key)) if high_key else None
        if low is not None and high is not None and not low <= number <= high:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{name} must be in the range {low} to {high} inclusive.")
        if low is None and high is not None and number > high:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{name} must be less than or equal to {high}")
        if high is None and low is not None and number < low:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{name} must be greater than or equal to {low}")
    if STREAMS_ASSIGNOR_NAME in parsed:
        assignors = [a for a in broker_setting(broker, "group.streams.assignors").split(",") if a]
        if parsed[STREAMS_ASSIGNOR_NAME] not in assignors:
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             f"{STREAMS_ASSIGNOR_NAME} '{parsed[STREAMS_ASSIGNOR_NAME]}' is not a registered task "
                             f"assignor. Registered assignors are: [{', '.join(assignors)}].")
    for session_key, heartbeat_key in _SESSION_OVER_HEARTBEAT:
        if session_key not in parsed and heartbeat_key not in parsed:
            continue
        session = parsed.get(session_key, int(broker_setting(broker, KEYS_BY_NAME[session_key].broker_synonym or "")))
        heartbeat = parsed.get(heartbeat_key,
                               int(broker_setting(broker, KEYS_BY_NAME[heartbeat_key].broker_synonym or "")))
        assert isinstance(session, int) and isinstance(heartbeat, int)
        if session <= heartbeat:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{session_key} must be greater than {heartbeat_key}")
    dlq = parsed.get(DLQ_TOPIC_NAME)
    if isinstance(dlq, str) and dlq.startswith("__"):
        raise KafkaError(ErrorCode.INVALID_CONFIG,
                         f"{DLQ_TOPIC_NAME}: DLQ topic name must not start with '__'")
    # Stored as given, as Kafka's controller keeps the request's strings.
    return values


def describe_group_configs(config: BrokerConfig, stored: dict[str, str]) -> list[EffectiveConfig]:
    """Every key of a group as Kafka describes it: the group's own value (source GROUP_CONFIG) over
    the broker's layers of its synonym, or GroupConfig's default for a key with no broker synonym.
    Internal keys are shown only where the group sets them, first, as Kafka lists them."""
    order = [n for n in DESCRIBE_ORDER if KEYS_BY_NAME[n].internal and n in stored]
    order += [n for n in DESCRIBE_ORDER if not KEYS_BY_NAME[n].internal]
    out = []
    for name in order:
        key = KEYS_BY_NAME[name]
        synonyms = [Synonym(name, stored[name], GROUP_CONFIG_SOURCE)] if name in stored else []  # type: ignore[arg-type]
        synonyms += _broker_layers(config, key)
        first = synonyms[0]
        out.append(EffectiveConfig(name, first.value, first.source, synonyms, key.config_type))
    return out


def _broker_layers(config: BrokerConfig, key: GroupConfigKey) -> list[Synonym]:
    if key.broker_synonym is None:
        return [Synonym(key.name, key.default, ConfigSource.DEFAULT_CONFIG)]
    if key.broker_synonym in BROKER_KEYS:
        return [Synonym(k, render_value(v), ConfigSource[source])
                for source, k, v in config.synonyms([key.broker_synonym])]
    return [Synonym(key.broker_synonym, KAFKA_BROKER_DEFAULTS[key.broker_synonym], ConfigSource.DEFAULT_CONFIG)]


def group_int(config: BrokerConfig, group_configs: dict[str, str], name: str) -> int:
    """An int group config's value for a group: its own, else the broker's (for the coordinator:
    ``consumer.session.timeout.ms``, ``consumer.heartbeat.interval.ms``)."""
    key = KEYS_BY_NAME[name]
    if name in group_configs:
        return int(group_configs[name])
    return int(broker_setting(config, key.broker_synonym) if key.broker_synonym else key.default)
