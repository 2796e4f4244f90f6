"""Topic-level configs: names, types, broker-wide synonyms, validation and effective values.

Each topic config falls back to a broker key (``retention.ms`` to ``log.retention.ms`` and
its hours/minutes forms, ``max.message.bytes`` to ``message.max.bytes``...), as Kafka's
LogConfig does; DescribeConfigs reports the value with its source and synonyms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from pykafkad.config import GZIP_LEVEL, KEYS, LONG_MAX, BrokerConfig, Check, between, render_value


class ConfigSource(IntEnum):
    """DescribeConfigs ConfigSource values."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7


class ConfigType(IntEnum):
    """DescribeConfigs ConfigType values (v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


_TYPE_BY_NAME = {
    "boolean": ConfigType.BOOLEAN, "string": ConfigType.STRING, "int": ConfigType.INT,
    "short": ConfigType.SHORT, "long": ConfigType.LONG, "double": ConfigType.DOUBLE,
    "list": ConfigType.LIST, "class": ConfigType.CLASS, "password": ConfigType.PASSWORD,
}


def _at_least(minimum: float) -> Check:
    """Kafka's ``Range.atLeast``."""
    def check(value: Any) -> str | None:
        return f"Value must be at least {_number(minimum)}" if value < minimum else None
    return Check(f"at least {_number(minimum)}", check)




_THROTTLED_REPLICA = re.compile(r"\*|[0-9]+:[0-9]+")


def _throttled_replica(value: Any) -> str | None:
    """Kafka's ``ThrottledReplicaListValidator``: ``*`` or ``partition:broker`` items."""
    if _THROTTLED_REPLICA.fullmatch(str(value).strip()):
        return None
    return ("Must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


THROTTLED_REPLICAS = Check("* or partition:broker,...", _throttled_replica)


def _number(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


_VALIDATION = "schema_registry/validation_policy.py"
# Confluent's subject name strategies, TopicNameStrategy first (the default).
SUBJECT_NAME_STRATEGIES = tuple(f"io.confluent.kafka.serializers.subject.{name}"
                                for name in ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy"))


@dataclass(frozen=True)
class TopicConfigKey:
    """A topic config, its Kafka 4.1 validation, and the broker keys it falls back to, most specific first."""

    name: str
    type: str
    broker_synonyms: tuple[str, ...]
    choices: tuple[str, ...] | None = None  # in Kafka's order, for its message
    check: Check | None = None
    # Kafka's internal keys (``internal.segment.bytes``): accepted, never described.
    internal: bool = False
    # The value of a key no broker key stands behind, when the topic does not set it.
    default: str | None = None
    # What it does, for a key with no broker key to take it from (docs/configuration.md).
    doc: str = ""
    # The module that honours it, for a key with no broker key (docs/configuration.md).
    by: str = ""

    @property
    def config_type(self) -> ConfigType:
        return _TYPE_BY_NAME[self.type]


# The bounds and valid values are Kafka 4.1's LogConfig definitions.
TOPIC_KEYS: dict[str, TopicConfigKey] = {
    k.name: k
    for k in [
        TopicConfigKey("cleanup.policy", "list", ("log.cleanup.policy",), ("compact", "delete")),
        TopicConfigKey(
            "compression.type", "string", ("compression.type",),
            ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        TopicConfigKey("compression.gzip.level", "int", ("compression.gzip.level",), check=GZIP_LEVEL),
        TopicConfigKey("compression.lz4.level", "int", ("compression.lz4.level",), check=between(1, 17)),
        TopicConfigKey("compression.zstd.level", "int", ("compression.zstd.level",), check=between(-131072, 22)),
        TopicConfigKey("delete.retention.ms", "long", ("log.cleaner.delete.retention.ms",), check=_at_least(0)),
        TopicConfigKey("file.delete.delay.ms", "long", ("log.segment.delete.delay.ms",), check=_at_least(0)),
        TopicConfigKey("flush.messages", "long", ("log.flush.interval.messages",), check=_at_least(1)),
        TopicConfigKey(
            "flush.ms", "long", ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"), check=_at_least(0)
        ),
        TopicConfigKey("index.interval.bytes", "int", ("log.index.interval.bytes",), check=_at_least(0)),
        TopicConfigKey("max.compaction.lag.ms", "long", ("log.cleaner.max.compaction.lag.ms",), check=_at_least(1)),
        TopicConfigKey("max.message.bytes", "int", ("message.max.bytes",), check=_at_least(0)),
        TopicConfigKey(
            "message.timestamp.after.max.ms", "long", ("log.message.timestamp.after.max.ms",), check=_at_least(0)
        ),
        TopicConfigKey(
            "message.timestamp.before.max.ms", "long", ("log.message.timestamp.before.max.ms",), check=_at_least(0)
        ),
        TopicConfigKey(
            "message.timestamp.type", "string", ("log.message.timestamp.type",), ("CreateTime", "LogAppendTime")
        ),
        TopicConfigKey(
            "min.cleanable.dirty.ratio", "double", ("log.cleaner.min.cleanable.ratio",), check=between(0, 1)
        ),
        TopicConfigKey("min.compaction.lag.ms", "long", ("log.cleaner.min.compaction.lag.ms",), check=_at_least(0)),
        TopicConfigKey("min.insync.replicas", "int", ("min.insync.replicas",), check=_at_least(1)),
        TopicConfigKey("preallocate", "boolean", ("log.preallocate",)),
        TopicConfigKey("retention.bytes", "long", ("log.retention.bytes",)),
        TopicConfigKey(
            "retention.ms", "long", ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
            check=_at_least(-1),
        ),
        TopicConfigKey("segment.bytes", "int", ("log.segment.bytes",), check=_at_least(1048576)),
        TopicConfigKey("segment.index.bytes", "int", ("log.index.size.max.bytes",), check=_at_least(4)),
        TopicConfigKey("segment.ms", "long", ("log.roll.ms", "log.roll.hours"), check=_at_least(1)),
        TopicConfigKey("unclean.leader.election.enable", "boolean", ("unclean.leader.election.enable",)),
        TopicConfigKey("errors.deadletterqueue.group.enable", "boolean", (), default="false",
                       doc="Whether share groups may write their dead letters to this topic "
                           "(errors.deadletterqueue.topic.name).", by="share/dead_letters.py"),
        TopicConfigKey("leader.replication.throttled.replicas", "list", (), check=THROTTLED_REPLICAS, default="",
                       doc="Replicas leader.replication.throttled.rate applies to (set by reassignments)."),
        TopicConfigKey("follower.replication.throttled.replicas", "list", (), check=THROTTLED_REPLICAS, default="",
                       doc="Replicas follower.replication.throttled.rate applies to (set by reassignments)."),
        # Broker-side schema validation (pykafkad/schema_registry/record_validation.py), with Confluent
        # Server's names, and pykafkad's own for the records' decoding too.
        *[TopicConfigKey(f"confluent.{part}.schema.validation", "boolean", (), default="false",
                         doc=f"Refuse records whose {part} is not framed with a schema id registered under the "
                             f"topic's {part} subject (docs/schema-registry.md).", by=_VALIDATION)
          for part in ("key", "value")],
        *[TopicConfigKey(f"confluent.{part}.subject.name.strategy", "class", (), SUBJECT_NAME_STRATEGIES,
                         default=SUBJECT_NAME_STRATEGIES[0],
                         doc=f"The subject a {part}'s schema id must be registered under, for schema validation.",
                         by=_VALIDATION)
          for part in ("key", "value")],
        *[TopicConfigKey(f"pykafkad.{part}.schema.validation", "string", (), ("none", "id", "full"), default="none",
                         doc=f"Schema validation of the {part}: id checks the schema id as confluent.{part}."
                             "schema.validation=true; full also decodes each record against its schema.",
                         by=_VALIDATION)
          for part in ("key", "value")],
        # As Kafka: segments smaller than segment.bytes allows, for tests; wins over segment.bytes.
        # Its broker-wide default is pykafkad's internal.log.segment.bytes (Kafka has none).
        TopicConfigKey("internal.segment.bytes", "int", ("internal.log.segment.bytes",), internal=True,
                       doc="For tests: segments of any size; wins over segment.bytes."),
    ]
}

# Broker keys in a unit other than the topic config's milliseconds: the factor to ms.
_BROKER_UNIT_MS = {"log.retention.minutes": 60_000, "log.retention.hours": 3_600_000, "log.roll.hours": 3_600_000}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INTEGER_LIMITS = {"int": 2**31, "long": 2**63}


def _parse(key: TopicConfigKey, text: str) -> Any:
    """The value as Kafka's ConfigDef parses it; ValueError carries Kafka's reason."""
    trimmed = text.strip()
    if key.type in _INTEGER_LIMITS:
        limit = _INTEGER_LIMITS[key.type]
        if not _INTEGER.fullmatch(trimmed) or not -limit <= int(trimmed) < limit:
            raise ValueError(f"Not a number of type {key.type.upper()}")
        return int(trimmed)
    if key.type == "double":
        try:
            return float(trimmed)
        except ValueError:
            raise ValueError("Not a number of type DOUBLE") from None
    if key.type == "boolean":
        if trimmed.lower() not in ("true", "false"):
            raise ValueError("Expected value to be either true or false")
        return trimmed.lower() == "true"
    if key.type == "list":
        return [item.strip() for item in trimmed.split(",")] if trimmed else []
    return trimmed


def validate_topic_config(name: str, value: str | None) -> str | None:
    """Return Kafka's message for a bad topic config override, or None if it is acceptable."""
    key = TOPIC_KEYS.get(name)
    if key is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return f"Null value not supported for topic config {name}"
    try:
        parsed = _parse(key, value)
    except ValueError as e:
        return f"Invalid value {value} for configuration {name}: {e}"
    for item in parsed if key.type == "list" else [parsed]:
        if key.choices and item not in key.choices:
            return f"Invalid value {item} for configuration {name}: String must be one of: {', '.join(key.choices)}"
        problem = key.check(item) if key.check else None
        if problem:
            return f"Invalid value {_number(item) if key.type == 'double' else item} for configuration {name}: " \
                   f"{problem}"
    return None


def validate_topic_configs(overrides: dict[str, str | None]) -> str | None:
    """Kafka's checks of a topic's whole set of overrides: each key, then the keys that must agree."""
    for name, value in overrides.items():
        problem = validate_topic_config(name, value)
        if problem:
            return problem
    if "min.compaction.lag.ms" in overrides and "max.compaction.lag.ms" in overrides:
        low = int(str(overrides["min.compaction.lag.ms"]).strip())
        high = int(str(overrides["max.compaction.lag.ms"]).strip())
        if low > high:
            return f"conflict topic config setting min.compaction.lag.ms ({low}) > max.compaction.lag.ms ({high})"
    return None


@dataclass(frozen=True)
class Synonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class EffectiveConfig:
    """A topic config's value as the topic sees it."""

    name: str
    value: str | None
    source: ConfigSource
    synonyms: list[Synonym]
    config_type: ConfigType




def _broker_value(broker: BrokerConfig, name: str, in_ms: bool) -> str | None:
    """A broker key's value as a string, in its own unit or (``in_ms``) in the topic config's ms."""
    value = broker[name]
    if value is None:
        return None
    if in_ms and name in _BROKER_UNIT_MS:
        value = value * _BROKER_UNIT_MS[name]
    return render_value(value)


def effective_topic_configs(overrides: dict[str, str], broker: BrokerConfig) -> list[EffectiveConfig]:
    """Every topic config with its value, source and synonyms (most specific first), as Kafka
    describes them: the value in the topic config's unit, each synonym in its own key's unit."""
    result = []
    for key in TOPIC_KEYS.values():
        if key.internal:
            continue
        synonyms: list[Synonym] = []
        if key.name in overrides:
            synonyms.append(Synonym(key.name, overrides[key.name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
        # As Kafka, the broker layers from the first entry for the most specific broker key on:
        # log.retention.minutes=6000 alone shows no synonym under retention.ms.
        layers = broker.synonyms_of(key.broker_synonyms[0], key.broker_synonyms) if key.broker_synonyms else []
        synonyms += [Synonym(name, render_value(value), ConfigSource[source]) for source, name, value in layers]
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        result.append(EffectiveConfig(key.name, topic_setting(overrides, broker, key.name), source, synonyms,
                                      key.config_type))
    return result


def broker_synonym_group(name: str) -> tuple[str, ...]:
    """The broker keys that stand for one setting (``log.retention.ms/minutes/hours``), most
    specific first, as Kafka's DynamicBrokerConfig groups them; a key alone stands for itself."""
    for key in TOPIC_KEYS.values():
        if name in key.broker_synonyms:
            return key.broker_synonyms
    return (name,)


def topic_setting(overrides: dict[str, str], broker: BrokerConfig, name: str) -> str | None:
    """The effective value of one topic config as a string, in the topic config's unit."""
    if name in overrides:
        return overrides[name]
    key = TOPIC_KEYS[name]
    for broker_key in key.broker_synonyms:
        found = _broker_value(broker, broker_key, in_ms=True)
        if found is not None:
            return found
    return key.default


def segment_bytes(overrides: dict[str, str], broker: BrokerConfig) -> int:
    """The size a topic's segments roll at: the internal key (topic or broker) wins, as Kafka's
    LogConfig.segmentSize() lets internal.segment.bytes win over segment.bytes."""
    internal = topic_setting(overrides, broker, "internal.segment.bytes")
    return int(internal) if internal is not None else topic_int(overrides, broker, "segment.bytes")


def accepted_only(names: Iterable[str]) -> list[str]:
    """The topic or broker config names among ``names`` that pykafkad accepts with no effect
    (``preallocate``, ``log.preallocate``...; docs/configuration.md): their setter is told so."""
    found = []
    for name in names:
        topic_key = TOPIC_KEYS.get(name)
        broker_keys = topic_key.broker_synonyms if topic_key else (name,)
        if broker_keys and broker_keys[0] in KEYS and KEYS[broker_keys[0]].accepted_only:
            found.append(name)
    return sorted(found)


def topic_int(overrides: dict[str, str], broker: BrokerConfig, name: str, default: int = LONG_MAX) -> int:
    value = topic_setting(overrides, broker, name)
    return int(value) if value is not None else default
