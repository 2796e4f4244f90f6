"""Topic-level configs: names, types, broker-wide synonyms, validation and effective values.

Each topic config falls back to a broker key (``retention.ms`` to ``log.retention.ms`` and
its hours/minutes forms, ``max.message.bytes`` to ``message.max.bytes``...), as Kafka's
LogConfig does; DescribeConfigs reports the value with its source and synonyms.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from pykafkad.config import LONG_MAX, BrokerConfig


class ConfigSource(IntEnum):
    """DescribeConfigs ConfigSource values."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


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


@dataclass(frozen=True)
class TopicConfigKey:
    """A topic config and the broker keys it falls back to, most specific first."""

    name: str
    type: str
    broker_synonyms: tuple[str, ...]
    choices: tuple[str, ...] | None = None
    minimum: float | None = None

    @property
    def config_type(self) -> ConfigType:
        return _TYPE_BY_NAME[self.type]


TOPIC_KEYS: dict[str, TopicConfigKey] = {
    k.name: k
    for k in [
        TopicConfigKey("cleanup.policy", "list", ("log.cleanup.policy",), ("delete", "compact")),
        TopicConfigKey(
            "compression.type", "string", ("compression.type",),
            ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
        ),
        TopicConfigKey("compression.gzip.level", "int", ("compression.gzip.level",)),
        TopicConfigKey("compression.lz4.level", "int", ("compression.lz4.level",)),
        TopicConfigKey("compression.zstd.level", "int", ("compression.zstd.level",)),
        TopicConfigKey("delete.retention.ms", "long", ("log.cleaner.delete.retention.ms",), minimum=0),
        TopicConfigKey("file.delete.delay.ms", "long", ("log.segment.delete.delay.ms",), minimum=0),
        TopicConfigKey("flush.messages", "long", ("log.flush.interval.messages",), minimum=1),
        TopicConfigKey("flush.ms", "long", ("log.flush.interval.ms",), minimum=0),
        TopicConfigKey("index.interval.bytes", "int", ("log.index.interval.bytes",), minimum=0),
        TopicConfigKey("max.compaction.lag.ms", "long", ("log.cleaner.max.compaction.lag.ms",), minimum=1),
        TopicConfigKey("max.message.bytes", "int", ("message.max.bytes",), minimum=0),
        TopicConfigKey(
            "message.timestamp.after.max.ms", "long", ("log.message.timestamp.after.max.ms",), minimum=0
        ),
        TopicConfigKey(
            "message.timestamp.before.max.ms", "long", ("log.message.timestamp.before.max.ms",), minimum=0
        ),
        TopicConfigKey(
            "message.timestamp.type", "string", ("log.message.timestamp.type",), ("CreateTime", "LogAppendTime")
        ),
        TopicConfigKey("min.cleanable.dirty.ratio", "double", ("log.cleaner.min.cleanable.ratio",), minimum=0),
        TopicConfigKey("min.compaction.lag.ms", "long", ("log.cleaner.min.compaction.lag.ms",), minimum=0),
        TopicConfigKey("min.insync.replicas", "int", ("min.insync.replicas",), minimum=1),
        TopicConfigKey("preallocate", "boolean", ("log.preallocate",)),
        TopicConfigKey(
            "retention.bytes", "long", ("log.retention.bytes",),
        ),
        TopicConfigKey(
            "retention.ms", "long", ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
            minimum=-1,
        ),
        TopicConfigKey("segment.bytes", "int", ("log.segment.bytes",), minimum=14),
        TopicConfigKey("segment.index.bytes", "int", ("log.index.size.max.bytes",), minimum=4),
        TopicConfigKey("segment.ms", "long", ("log.roll.ms", "log.roll.hours"), minimum=1),
        TopicConfigKey("unclean.leader.election.enable", "boolean", ("unclean.leader.election.enable",)),
    ]
}

_BROKER_UNIT_MS = {"log.retention.minutes": 60_000, "log.retention.hours": 3_600_000, "log.roll.hours": 3_600_000}


def validate_topic_config(name: str, value: str | None) -> str | None:
    """Return a problem description for a topic config override, or None if it is acceptable."""
    key = TOPIC_KEYS.get(name)
    if key is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return f"Null value not supported for topic config {name}"
    text = value.strip()
    try:
        if key.type in ("int", "long"):
            number: float = int(text)
        elif key.type == "double":
            number = float(text)
        elif key.type == "boolean":
            if text.lower() not in ("true", "false"):
                return f"Invalid value {value} for configuration {name}: expected true or false"
            return None
        else:
            items = [t.strip() for t in text.split(",")] if key.type == "list" else [text]
            if key.choices and any(item not in key.choices for item in items):
                return f"Invalid value {value} for configuration {name}: must be one of {', '.join(key.choices)}"
            return None
    except ValueError:
        return f"Invalid value {value} for configuration {name}: expected a number"
    if key.minimum is not None and number < key.minimum:
        return f"Invalid value {value} for configuration {name}: must be at least {key.minimum:g}"
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


def _render(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _broker_value(broker: BrokerConfig, name: str) -> tuple[str | None, ConfigSource] | None:
    value = broker[name]
    if value is None:
        return None
    value = value * _BROKER_UNIT_MS.get(name, 1) if name in _BROKER_UNIT_MS else value
    return _render(value), ConfigSource[broker.source_of(name)]


def effective_topic_configs(overrides: dict[str, str], broker: BrokerConfig) -> list[EffectiveConfig]:
    """Every topic config with its value, source and synonyms (most specific first)."""
    result = []
    for key in TOPIC_KEYS.values():
        synonyms: list[Synonym] = []
        if key.name in overrides:
            synonyms.append(Synonym(key.name, overrides[key.name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
        # Set broker keys (dynamic, then static) in order of precedence...
        for broker_key in key.broker_synonyms:
            if broker.source_of(broker_key) != "DEFAULT_CONFIG":
                found = _broker_value(broker, broker_key)
                if found is not None:
                    synonyms.append(Synonym(broker_key, found[0], found[1]))
        # ...then the default, from the least specific synonym that has one (hours before ms).
        for broker_key in reversed(key.broker_synonyms):
            found = _broker_value(broker, broker_key)
            if found is not None and found[1] == ConfigSource.DEFAULT_CONFIG:
                synonyms.append(Synonym(broker_key, found[0], ConfigSource.DEFAULT_CONFIG))
                break
        if synonyms:
            top = synonyms[0]
            result.append(EffectiveConfig(key.name, top.value, top.source, synonyms, key.config_type))
        else:
            result.append(EffectiveConfig(key.name, None, ConfigSource.DEFAULT_CONFIG, [], key.config_type))
    return result


def topic_setting(overrides: dict[str, str], broker: BrokerConfig, name: str) -> str | None:
    """The effective value of one topic config as a string."""
    if name in overrides:
        return overrides[name]
    key = TOPIC_KEYS[name]
    for broker_key in key.broker_synonyms:
        found = _broker_value(broker, broker_key)
        if found is not None:
            return found[0]
    return None


def topic_int(overrides: dict[str, str], broker: BrokerConfig, name: str, default: int = LONG_MAX) -> int:
    value = topic_setting(overrides, broker, name)
    return int(value) if value is not None else default
