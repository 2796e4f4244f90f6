"""Broker configuration: Kafka's key names, defaults and validation, in one place.

A config is read from a ``server.properties`` style file plus ``--override``
pairs, validated once at start-up, and then read through typed attributes.
Unknown keys warn (Kafka users carry many keys we do not use yet); a bad value
stops start-up with a message naming the key.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pykafkad.broker_logging import LOGGER_PREFIX, LoggingSettings, log4j_level
from pykafkad.security.principal_mapping import PrincipalMappingError, parse_rules

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigError(Exception):
    """A configuration key or value the broker cannot start with."""


@dataclass(frozen=True)
class ConfigKey:
    """One broker setting as Kafka defines it."""

    name: str
    type: str  # "int", "long", "short", "double", "boolean", "string", "list", "password", "class"
    default: Any
    check: Callable[[Any], str | None] | None = None  # returns a problem description, or None
    # Kafka's internal keys (defineInternal): accepted, never described by DescribeConfigs.
    internal: bool = False


# The SASL mechanisms pykafkad serves.
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# What a broker authenticates itself with to the others (security/sasl_client.py).
INTER_BROKER_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
ALL_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def at_least(minimum: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value is None or value >= minimum else f"Value must be at least {minimum}"

    return check


def one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"String must be one of: {', '.join(choices)}"

    return check


def _check_compression(value: Any) -> str | None:
    allowed = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")  # Kafka's order
    return None if value in allowed else f"String must be one of: {', '.join(allowed)}"


def _check_cleanup_policy(value: Any) -> str | None:
    bad = [v for v in value if v not in ("delete", "compact")]
    return f"unknown policy {', '.join(bad)}; use delete, compact or both" if bad else None


# The authorizers Kafka names; either means pykafkad's ACL authorizer (security/authorizer.py).
AUTHORIZER_CLASSES = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                      "kafka.security.authorizer.AclAuthorizer")


def parse_metrics_listener(value: str | None) -> tuple[str, int] | None:
    """``metrics.listener``: ``http://host:port`` -> (host, port); None when empty (no HTTP listener)."""
    if not value:
        return None
    rest = value.removeprefix("http://")
    host, sep, port = rest.rpartition(":")
    if rest == value or not sep or not port.isdigit() or "/" in rest or int(port) > 65535:
        raise ValueError("not http://host:port (e.g. http://127.0.0.1:9644)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _check_metrics_listener(value: Any) -> str | None:
    try:
        parse_metrics_listener(value)
    except ValueError as e:
        return str(e)
    return None


def _check_log4j_level(value: Any) -> str | None:
    if value is None:
        return None
    try:
        log4j_level("", value)
    except ValueError:
        return "not a level; use one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF"
    return None


def _check_authorizer(value: Any) -> str | None:
    if value in ("", None, *AUTHORIZER_CLASSES):
        return None
    return f"unknown authorizer; use {AUTHORIZER_CLASSES[0]} (or leave it empty for none)"


# Settings the broker honours (or reads now and honours in a later release).
KEYS: dict[str, ConfigKey] = {
    k.name: k
    for k in [
        ConfigKey("node.id", "int", None),  # required by Kafka's KRaft brokers: no default
        ConfigKey("broker.id", "int", -1),
        ConfigKey("listeners", "list", ["PLAINTEXT://:9092"]),
        ConfigKey("advertised.listeners", "list", None),
        # Kafka's default map, in the order Kafka 4.1 describes it.
        ConfigKey("listener.security.protocol.map", "list",
                  ["SASL_SSL:SASL_SSL", "PLAINTEXT:PLAINTEXT", "SSL:SSL", "SASL_PLAINTEXT:SASL_PLAINTEXT"]),
        ConfigKey("inter.broker.listener.name", "string", None),
        ConfigKey("security.inter.broker.protocol", "string", "PLAINTEXT", one_of(*ALL_PROTOCOLS)),
        # TLS (network/tls.py): PEM key stores and trust stores, as Kafka's ssl.*.type=PEM.
        ConfigKey("ssl.keystore.type", "string", "JKS"),
        ConfigKey("ssl.keystore.location", "string", None),
        ConfigKey("ssl.keystore.password", "password", None),
        ConfigKey("ssl.keystore.key", "password", None),
        ConfigKey("ssl.keystore.certificate.chain", "password", None),
        ConfigKey("ssl.key.password", "password", None),
        ConfigKey("ssl.truststore.type", "string", "JKS"),
        ConfigKey("ssl.truststore.location", "string", None),
        ConfigKey("ssl.truststore.password", "password", None),
        ConfigKey("ssl.truststore.certificates", "password", None),
        ConfigKey("ssl.client.auth", "string", "none", one_of("required", "requested", "none")),
        ConfigKey("ssl.enabled.protocols", "list", ["TLSv1.2", "TLSv1.3"]),
        ConfigKey("ssl.protocol", "string", "TLSv1.3"),
        ConfigKey("ssl.endpoint.identification.algorithm", "string", "https"),
        # SASL (security/sasl.py): PLAIN users from JAAS config, SCRAM users from /config/users.
        ConfigKey("sasl.enabled.mechanisms", "list", ["GSSAPI"]),
        ConfigKey("sasl.mechanism.inter.broker.protocol", "string", "GSSAPI"),
        ConfigKey("sasl.jaas.config", "password", None),
        ConfigKey("connection.failed.authentication.delay.ms", "int", 100, at_least(0)),
        ConfigKey("connections.max.reauth.ms", "long", 0, at_least(0)),
        # mTLS principals (security/principal_mapping.py): Kafka's RULE:pattern/replacement/[LU] list.
        ConfigKey("ssl.principal.mapping.rules", "string", "DEFAULT"),
        # Authorization (security/authorizer.py): ACLs under /kafka-acl, as Kafka's ZooKeeper mode.
        ConfigKey("authorizer.class.name", "string", "", _check_authorizer),
        ConfigKey("super.users", "string", ""),
        ConfigKey("allow.everyone.if.no.acl.found", "boolean", False),
        # Client quotas (quota/): the rate window, as Kafka's quota.window.*.
        ConfigKey("quota.window.num", "int", 11, at_least(1)),
        ConfigKey("quota.window.size.seconds", "int", 1, at_least(1)),
        ConfigKey("controller.quota.window.num", "int", 11, at_least(1)),
        ConfigKey("controller.quota.window.size.seconds", "int", 1, at_least(1)),
        # pykafkad's HTTP listener for /metrics, /healthz and /readyz (metrics/http_endpoint.py); off if empty.
        ConfigKey("metrics.listener", "string", "", _check_metrics_listener),
        # The web console and the JSON admin API on that listener: they show every topic's records to
        # whoever reaches the port, so they are off unless asked for (and never with an authorizer).
        ConfigKey("metrics.console.enable", "boolean", False),
        # The broker's own log lines (broker_logging.py): log4j's root level, and pykafkad's format and file.
        ConfigKey("log4j.rootLogger", "string", None, _check_log4j_level),
        ConfigKey("logging.format", "string", "text", one_of("text", "json")),
        ConfigKey("logging.file", "string", ""),
        ConfigKey("logging.file.max.bytes", "long", 100 * 1024 * 1024, at_least(1024)),
        ConfigKey("logging.file.backups", "int", 10, at_least(0)),
        # Connection limits (network/connection_quotas.py).
        ConfigKey("max.connections", "int", INT_MAX, at_least(0)),
        ConfigKey("max.connections.per.ip", "int", INT_MAX, at_least(0)),
        ConfigKey("max.connections.per.ip.overrides", "string", ""),
        ConfigKey("log.dirs", "list", None),
        ConfigKey("log.dir", "string", "/tmp/kafka-logs"),
        ConfigKey("num.partitions", "int", 1, at_least(1)),
        # DescribeTopicPartitions' page size cap (handlers/describe_topic_partitions.py).
        ConfigKey("max.request.partition.size.limit", "int", 2000, at_least(1)),
        ConfigKey("default.replication.factor", "short", 1, at_least(1)),
        ConfigKey("auto.create.topics.enable", "boolean", True),
        ConfigKey("delete.topic.enable", "boolean", True),
        # Kafka 4's minimum is 1 MiB; tests that want smaller segments use the internal key below.
        ConfigKey("log.segment.bytes", "int", 1073741824, at_least(1048576)),
        # The broker-wide default of the topic's internal.segment.bytes (Kafka has the topic key only):
        # segments of any size, for tests; never described, as Kafka's internal keys.
        ConfigKey("internal.log.segment.bytes", "int", None, at_least(14), internal=True),
        ConfigKey("log.roll.hours", "int", 168, at_least(1)),
        ConfigKey("log.roll.ms", "long", None, at_least(1)),
        ConfigKey("log.retention.hours", "int", 168),
        ConfigKey("log.retention.minutes", "int", None),
        ConfigKey("log.retention.ms", "long", None),
        ConfigKey("log.retention.bytes", "long", -1),
        ConfigKey("log.retention.check.interval.ms", "long", 300000, at_least(1)),
        ConfigKey("log.index.interval.bytes", "int", 4096, at_least(0)),
        ConfigKey("log.index.size.max.bytes", "int", 10485760, at_least(4)),
        ConfigKey("log.cleanup.policy", "list", ["delete"], _check_cleanup_policy),
        ConfigKey("log.message.timestamp.type", "string", "CreateTime", one_of("CreateTime", "LogAppendTime")),
        ConfigKey("log.flush.interval.messages", "long", LONG_MAX, at_least(1)),
        ConfigKey("log.flush.interval.ms", "long", None),
        ConfigKey("log.cleaner.delete.retention.ms", "long", 86400000, at_least(0)),
        ConfigKey("log.cleaner.min.compaction.lag.ms", "long", 0, at_least(0)),
        ConfigKey("log.cleaner.max.compaction.lag.ms", "long", LONG_MAX, at_least(1)),
        ConfigKey("log.cleaner.min.cleanable.ratio", "double", 0.5),
        ConfigKey("log.segment.delete.delay.ms", "long", 60000, at_least(0)),
        ConfigKey("log.message.timestamp.before.max.ms", "long", LONG_MAX, at_least(0)),
        ConfigKey("log.message.timestamp.after.max.ms", "long", 3600000, at_least(0)),
        ConfigKey("log.preallocate", "boolean", False),
        ConfigKey("log.cleaner.enable", "boolean", True),
        ConfigKey("log.cleaner.backoff.ms", "long", 15000, at_least(0)),
        ConfigKey("log.cleaner.dedupe.buffer.size", "long", 134217728, at_least(1)),
        ConfigKey("log.cleaner.io.buffer.load.factor", "double", 0.9),
        ConfigKey("log.flush.scheduler.interval.ms", "long", LONG_MAX, at_least(1)),
        # How often each log dir's recovery-point-offset-checkpoint is written (log/housekeeping.py).
        ConfigKey("log.flush.offset.checkpoint.interval.ms", "int", 60000, at_least(0)),
        ConfigKey("compression.gzip.level", "int", -1),
        ConfigKey("compression.lz4.level", "int", 9),
        ConfigKey("compression.zstd.level", "int", 3),
        ConfigKey("compression.type", "string", "producer", _check_compression),
        ConfigKey("message.max.bytes", "int", 1048588, at_least(0)),
        ConfigKey("min.insync.replicas", "int", 1, at_least(1)),
        ConfigKey("unclean.leader.election.enable", "boolean", False),
        ConfigKey("socket.request.max.bytes", "int", 104857600, at_least(1)),
        ConfigKey("connections.max.idle.ms", "long", 600000),
        ConfigKey("cluster.id", "string", None),
        # Cluster mode: with zookeeper.connect set, the cluster's metadata lives in ZooKeeper
        # (Kafka's znodes); without it the broker keeps it in a file under its first log dir.
        ConfigKey("zookeeper.connect", "string", None),
        ConfigKey("zookeeper.session.timeout.ms", "int", 18000, at_least(1)),
        ConfigKey("zookeeper.connection.timeout.ms", "int", None),
        ConfigKey("broker.rack", "string", None),
        # The hand-over of a controlled shutdown is given max.retries x retry.backoff.ms at most.
        ConfigKey("controlled.shutdown.enable", "boolean", True),
        ConfigKey("controlled.shutdown.max.retries", "int", 3, at_least(0)),
        ConfigKey("controlled.shutdown.retry.backoff.ms", "long", 5000, at_least(0)),
        # Replication: followers fetch from leaders (replica/replica_fetcher.py).
        ConfigKey("replica.lag.time.max.ms", "long", 30000, at_least(1)),
        # Preferred leaders (controller/leader_election.py).
        ConfigKey("auto.leader.rebalance.enable", "boolean", True),
        ConfigKey("leader.imbalance.check.interval.seconds", "long", 300, at_least(1)),
        ConfigKey("leader.imbalance.per.broker.percentage", "int", 10, at_least(0)),
        ConfigKey("replica.fetch.wait.max.ms", "int", 500, at_least(0)),
        ConfigKey("replica.fetch.min.bytes", "int", 1, at_least(1)),
        ConfigKey("replica.fetch.max.bytes", "int", 1048576, at_least(0)),
        ConfigKey("replica.fetch.response.max.bytes", "int", 10485760, at_least(0)),
        ConfigKey("replica.fetch.backoff.ms", "int", 1000, at_least(0)),
        ConfigKey("replica.high.watermark.checkpoint.interval.ms", "long", 5000, at_least(1)),
        ConfigKey("num.replica.fetchers", "int", 1, at_least(1)),
        # Replication quotas (replica/replication_quota.py): bytes/s for the replicas a topic's
        # leader/follower.replication.throttled.replicas names, as kafka-reassign-partitions sets them.
        ConfigKey("leader.replication.throttled.rate", "long", LONG_MAX, at_least(0)),
        ConfigKey("follower.replication.throttled.rate", "long", LONG_MAX, at_least(0)),
        ConfigKey("replication.quota.window.num", "int", 11, at_least(1)),
        ConfigKey("replication.quota.window.size.seconds", "int", 1, at_least(1)),
        # Group coordinator (pykafkad.coordinator.group)
        ConfigKey("offsets.topic.num.partitions", "int", 50, at_least(1)),
        ConfigKey("offsets.topic.replication.factor", "short", 3, at_least(1)),
        ConfigKey("offsets.retention.minutes", "int", 10080, at_least(1)),
        ConfigKey("offsets.retention.check.interval.ms", "long", 600000, at_least(1)),
        ConfigKey("offsets.commit.timeout.ms", "int", 5000, at_least(1)),
        ConfigKey("offset.metadata.max.bytes", "int", 4096),
        ConfigKey("group.initial.rebalance.delay.ms", "int", 3000, at_least(0)),
        ConfigKey("group.min.session.timeout.ms", "int", 6000),
        ConfigKey("group.max.session.timeout.ms", "int", 1800000),
        ConfigKey("group.max.size", "int", INT_MAX, at_least(1)),
        # Transaction coordinator (pykafkad.coordinator.transaction)
        ConfigKey("transaction.state.log.num.partitions", "int", 50, at_least(1)),
        ConfigKey("transaction.state.log.replication.factor", "short", 3, at_least(1)),
        ConfigKey("transaction.state.log.min.isr", "int", 2, at_least(1)),
        ConfigKey("transaction.state.log.segment.bytes", "int", 104857600, at_least(1)),
        ConfigKey("transaction.max.timeout.ms", "int", 900000, at_least(1)),
        ConfigKey("transaction.abort.timed.out.transaction.cleanup.interval.ms", "int", 10000, at_least(1)),
        ConfigKey("transactional.id.expiration.ms", "int", 604800000, at_least(1)),
        ConfigKey("producer.id.expiration.ms", "int", 86400000, at_least(1)),
        ConfigKey("producer.id.expiration.check.interval.ms", "int", 600000, at_least(1)),
        ConfigKey("transaction.remove.expired.transaction.cleanup.interval.ms", "int", 3600000, at_least(1)),
    ]
}

# Kafka keys a stock server.properties carries that have no meaning for a
# single-process broker yet; accepted without a warning.
ACCEPTED_UNUSED = frozenset(
    {
        "process.roles", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
        "controller.listener.names",
        "num.network.threads", "num.io.threads", "socket.send.buffer.bytes", "socket.receive.buffer.bytes",
        "num.recovery.threads.per.data.dir",
        "share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr",
        "queued.max.requests",
    }
)


def _parse(key: ConfigKey, raw: str) -> Any:
    text = raw.strip()
    if key.type in ("int", "long", "short"):
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"{key.name}={raw!r}: expected an integer") from None
        limit = {"int": INT_MAX, "short": 32767, "long": LONG_MAX}[key.type]
        if not -limit - 1 <= value <= limit:
            raise ConfigError(f"{key.name}={raw!r}: out of range for a {key.type}")
        return value
    if key.type == "double":
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{key.name}={raw!r}: expected a number") from None
    if key.type == "boolean":
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{key.name}={raw!r}: expected true or false")
        return text.lower() == "true"
    if key.type == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def read_properties(path: Path) -> dict[str, str]:
    """Parse a Java-style properties file (``key=value``, ``key: value``, ``#``/``!`` comments)."""
    props: dict[str, str] = {}
    pending = ""
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if not pending and (not stripped or stripped[0] in "#!"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1]
            continue
        stripped = pending + stripped
        pending = ""
        sep = min((i for i in (stripped.find("="), stripped.find(":")) if i >= 0), default=-1)
        if sep <= 0:
            raise ConfigError(f"{path}:{lineno}: expected key=value, got {line!r}")
        props[stripped[:sep].strip()] = stripped[sep + 1 :].strip()
    return props


@dataclass(frozen=True)
class Listener:
    """A listener: its name (``PLAINTEXT``, ``SSL`` or one of ``listener.security.protocol.map``),
    address and security protocol."""

    name: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def parse_ip_overrides(text: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count`` items."""
    overrides: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        host, sep, count = item.strip().rpartition(":")
        if not sep or not host or not count.isdigit():
            raise ConfigError(f"max.connections.per.ip.overrides: {item.strip()!r} is not host:count")
        overrides[host] = int(count)
    return overrides


def parse_super_users(text: str) -> frozenset[str]:
    """``super.users``: principals separated by semicolons, each ``Type:name``."""
    users = [u.strip() for u in text.split(";") if u.strip()]
    bad = [u for u in users if ":" not in u]
    if bad:
        raise ConfigError(f"super.users: {bad[0]!r} is not a principal; write User:<name>, separated by ';'")
    return frozenset(users)


def parse_protocol_map(items: list[str]) -> dict[str, str]:
    """``listener.security.protocol.map``: listener name -> security protocol."""
    mapping: dict[str, str] = {}
    for item in items:
        name, sep, protocol = item.partition(":")
        if not sep or not name.strip() or protocol.strip().upper() not in ALL_PROTOCOLS:
            raise ConfigError(f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL with PROTOCOL one "
                              f"of {', '.join(ALL_PROTOCOLS)}")
        mapping[name.strip().upper()] = protocol.strip().upper()
    return mapping


def parse_listener(spec: str, key: str, protocols: dict[str, str] | None = None) -> Listener:
    name, sep, address = spec.partition("://")
    if not sep:
        raise ConfigError(f"{key}: {spec!r} is not NAME://host:port")
    host, colon, port_text = address.rpartition(":")
    if not colon or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigError(f"{key}: {spec!r} has no valid port")
    host = host.strip("[]")
    name = name.strip().upper()
    protocol = (protocols if protocols is not None else {p: p for p in ALL_PROTOCOLS}).get(name)
    if protocol is None:
        raise ConfigError(f"{key}: no security protocol defined for listener {name}; add {name}:<protocol> to "
                          "listener.security.protocol.map")
    return Listener(name, host, int(port_text), protocol)


class BrokerConfig:
    """Validated broker settings: ``config["log.segment.bytes"]`` plus a few derived values."""

    def __init__(self, values: dict[str, Any], explicit: set[str]) -> None:
        self._values = values
        self.explicit = explicit  # keys the operator set (STATIC_BROKER_CONFIG), the rest are defaults
        # Set at run time by AlterConfigs on the broker resource: this broker's ("1") and the
        # cluster-wide default (""), as Kafka keeps them under /config/brokers/<id> and <default>.
        self.dynamic_broker: dict[str, Any] = {}
        self.dynamic_default: dict[str, Any] = {}
        node = values["node.id"] if values["node.id"] is not None and values["node.id"] >= 0 else values["broker.id"]
        self.node_id: int = node if node >= 0 else 1
        # As Kafka copies one of node.id and broker.id to the other, both always report the id in
        # use; set by the operator if either was.
        values["node.id"] = values["broker.id"] = self.node_id
        if explicit & {"node.id", "broker.id"}:
            explicit |= {"node.id", "broker.id"}
        self.protocol_map = parse_protocol_map(values["listener.security.protocol.map"])
        self.listeners = [parse_listener(s, "listeners", self.protocol_map) for s in values["listeners"]]
        if not self.listeners:
            raise ConfigError("listeners: at least one listener is needed, e.g. PLAINTEXT://127.0.0.1:9092")
        names = [lst.name for lst in self.listeners]
        if len(set(names)) != len(names):
            raise ConfigError(f"listeners: each listener needs a name of its own, got {', '.join(names)}")
        advertised = values["advertised.listeners"]
        self.advertised = (
            [parse_listener(s, "advertised.listeners", self.protocol_map) for s in advertised]
            if advertised else self.listeners
        )
        unknown = [lst.name for lst in self.advertised if lst.name not in names]
        if unknown:
            raise ConfigError(f"advertised.listeners: {', '.join(unknown)} is not one of listeners "
                              f"({', '.join(names)})")
        self.inter_broker_listener = self._inter_broker_listener(values, explicit)
        self.connections_per_ip_overrides = parse_ip_overrides(values["max.connections.per.ip.overrides"])
        try:
            self.principal_rules = parse_rules(values["ssl.principal.mapping.rules"])
        except PrincipalMappingError as e:
            raise ConfigError(f"ssl.principal.mapping.rules: {e}") from None
        self.super_users = parse_super_users(values["super.users"])
        if values["metrics.console.enable"] and values["authorizer.class.name"]:
            raise ConfigError("metrics.console.enable=true cannot be combined with authorizer.class.name: the console "
                              "does not authenticate its readers, so it would show topics the ACLs protect; leave "
                              "it off on brokers with ACLs")
        # Kafka's per-listener keys (``listener.name.<listener>.<mechanism>.sasl.jaas.config``...).
        self.listener_props: dict[str, str] = {}
        # log4j.logger.<name>=<LEVEL> keys: each logger's level (broker_logging.py).
        self.logger_levels: dict[str, int] = {}
        if any(lst.uses_sasl for lst in self.listeners):
            unsupported = [m for m in values["sasl.enabled.mechanisms"] if m not in SASL_MECHANISMS]
            if unsupported or not values["sasl.enabled.mechanisms"]:
                raise ConfigError(f"sasl.enabled.mechanisms: {', '.join(unsupported) or '(none)'} not served; use "
                                  f"{', '.join(SASL_MECHANISMS)} (Kafka's default is GSSAPI: set "
                                  "sasl.enabled.mechanisms for a SASL listener)")
        if self.inter_broker_listener.uses_sasl:
            mechanism = values["sasl.mechanism.inter.broker.protocol"]
            if mechanism not in INTER_BROKER_SASL_MECHANISMS or mechanism not in values["sasl.enabled.mechanisms"]:
                raise ConfigError(f"sasl.mechanism.inter.broker.protocol: {mechanism} must be one of "
                                  f"sasl.enabled.mechanisms ({', '.join(values['sasl.enabled.mechanisms'])}) and "
                                  f"one of {', '.join(INTER_BROKER_SASL_MECHANISMS)}")
        dirs = values["log.dirs"] or [values["log.dir"]]
        self.log_dirs = [Path(d) for d in dirs]

    def logging_settings(self) -> LoggingSettings:
        root = self["log4j.rootLogger"]
        return LoggingSettings(
            root_level=log4j_level("log4j.rootLogger", root) if root else None, levels=dict(self.logger_levels),
            format=self["logging.format"], file=Path(self["logging.file"]) if self["logging.file"] else None,
            file_max_bytes=self["logging.file.max.bytes"], file_backups=self["logging.file.backups"])

    def __getitem__(self, key: str) -> Any:
        if key in self.dynamic_broker:
            return self.dynamic_broker[key]
        if key in self.dynamic_default:
            return self.dynamic_default[key]
        return self._values[key]

    def synonyms(self, names: Iterable[str]) -> list[tuple[str, str, Any]]:
        """(source, key, value) of every layer that sets one of ``names``, in Kafka's order
        (ConfigHelper.configSynonyms): most specific layer first, and within a layer ``names``'
        order.  The default layer holds only keys whose default is not null."""
        names = list(names)
        static = {k: self._values[k] for k in names if k in self.explicit}
        defaults = {k: KEYS[k].default for k in names if KEYS[k].default is not None}
        found = []
        for source, layer in (("DYNAMIC_BROKER_CONFIG", self.dynamic_broker),
                              ("DYNAMIC_DEFAULT_BROKER_CONFIG", self.dynamic_default),
                              ("STATIC_BROKER_CONFIG", static), ("DEFAULT_CONFIG", defaults)):
            found += [(source, k, layer[k]) for k in names if k in layer]
        return found

    def synonyms_of(self, name: str, group: Iterable[str]) -> list[tuple[str, str, Any]]:
        """The synonyms DescribeConfigs shows for ``name``: those of its whole ``group``
        (``log.retention.ms/minutes/hours``) from the first entry for ``name`` on, as Kafka's
        ConfigHelper drops the ones before it (so ``log.retention.ms`` unset shows none)."""
        layers = self.synonyms(group)
        first = next((i for i, layer in enumerate(layers) if layer[1] == name), len(layers))
        return layers[first:]

    def source_of(self, key: str) -> str:
        """Where ``key``'s value comes from, as DescribeConfigs names it."""
        layers = self.synonyms([key])
        return layers[0][0] if layers else "DEFAULT_CONFIG"

    def static_value(self, key: str) -> Any:
        """The value from the file or default, under any dynamic layer."""
        return self._values[key]

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._values.items()

    def _inter_broker_listener(self, values: dict[str, Any], explicit: set[str]) -> Listener:
        """The advertised listener other brokers reach this one on: ``inter.broker.listener.name``,
        or the listener named after ``security.inter.broker.protocol`` (Kafka's rule); a cluster of
        one broker that advertises neither uses its first listener."""
        name = values["inter.broker.listener.name"]
        if name and "security.inter.broker.protocol" in explicit:
            raise ConfigError("Only one of inter.broker.listener.name and security.inter.broker.protocol should be "
                              "set.")
        wanted = (name or values["security.inter.broker.protocol"]).strip().upper()
        for listener in self.advertised:
            if listener.name == wanted:
                return listener
        if not name and "security.inter.broker.protocol" not in explicit and not values["zookeeper.connect"]:
            return self.advertised[0]
        key = "inter.broker.listener.name" if name else "security.inter.broker.protocol"
        raise ConfigError(f"{key}: {wanted} must be a listener name defined in advertised.listeners "
                          f"({', '.join(lst.name for lst in self.advertised)})")

    @staticmethod
    def endpoint(listener: Listener) -> tuple[str, int]:
        """Where clients reach ``listener``: its host (127.0.0.1 for an unspecified one) and port."""
        host = listener.host or "127.0.0.1"
        if host == "0.0.0.0":
            host = "127.0.0.1"
        return host, listener.port

    @property
    def advertised_endpoint(self) -> tuple[str, int]:
        """The inter-broker listener's endpoint."""
        return self.endpoint(self.inter_broker_listener)

    @property
    def advertised_endpoints(self) -> dict[str, tuple[str, int]]:
        """Every advertised listener's endpoint, by listener name."""
        return {lst.name: self.endpoint(lst) for lst in self.advertised}

    @property
    def retention_ms(self) -> int:
        if self["log.retention.ms"] is not None:
            return self["log.retention.ms"]
        if self["log.retention.minutes"] is not None:
            return self["log.retention.minutes"] * 60_000
        return self["log.retention.hours"] * 3_600_000

    @property
    def segment_ms(self) -> int:
        if self["log.roll.ms"] is not None:
            return self["log.roll.ms"]
        return self["log.roll.hours"] * 3_600_000


def parse_value(name: str, raw: str) -> Any:
    """One key's value parsed and checked, or ConfigError naming the key."""
    key = KEYS.get(name)
    if key is None:
        raise ConfigError(f"Unknown broker config {name}")
    value = _parse(key, raw)
    if key.check is not None:
        problem = key.check(value)
        if problem:
            raise ConfigError(f"Invalid value {raw.strip()} for configuration {name}: {problem}")
    return value


def build_config(props: dict[str, str]) -> BrokerConfig:
    """Validate raw key/value strings into a BrokerConfig, or raise ConfigError naming the key."""
    values = {name: key.default for name, key in KEYS.items()}
    explicit: set[str] = set()
    listener_props: dict[str, str] = {}
    logger_levels: dict[str, int] = {}
    for name, raw in props.items():
        key = KEYS.get(name)
        if key is None and name.startswith("listener.name."):
            listener_props[name] = raw.strip()
            continue
        if key is None and name.startswith(LOGGER_PREFIX) and len(name) > len(LOGGER_PREFIX):
            try:
                logger_levels[name.removeprefix(LOGGER_PREFIX)] = log4j_level(name, raw)
            except ValueError as e:
                raise ConfigError(str(e)) from None
            continue
        if key is None:
            if name not in ACCEPTED_UNUSED:
                log.warning("unknown configuration key %s is ignored", name)
            continue
        values[name] = parse_value(name, raw)
        explicit.add(name)
    _check_ids(values, explicit, "")
    config = BrokerConfig(values, explicit)
    config.listener_props = listener_props
    config.logger_levels = logger_levels
    return config


# node.id and broker.id name one id: Kafka copies whichever is set to the other.
ID_KEYS = ("node.id", "broker.id")


def _check_ids(values: dict[str, Any], explicit: set[str], where: str) -> None:
    """Two different ids set side by side are refused, in Kafka's words (KafkaConfig)."""
    if set(ID_KEYS) <= explicit and values["node.id"] != values["broker.id"]:
        raise ConfigError(f"You must set `node.id` to the same value as `broker.id` (node.id={values['node.id']}, "
                          f"broker.id={values['broker.id']}{where}).")


def load_config(path: Path | None, overrides: Iterable[str] = ()) -> BrokerConfig:
    """Read ``path`` (if given) and apply ``KEY=VALUE`` overrides, as kafka-server-start.sh does.

    An override of either id key replaces the file's value of both: ``--override broker.id=2``
    on a file with ``node.id=1`` gives broker 2, not a conflict (nor broker 1)."""
    props = read_properties(path) if path is not None else {}
    given: dict[str, str] = {}
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--override {item!r}: expected KEY=VALUE")
        given[name.strip()] = value.strip()
    for source, layer in ((f" in {path}", props), (" given as --override", given)):
        ids = {k: parse_value(k, layer[k]) for k in ID_KEYS if k in layer}
        _check_ids({**dict.fromkeys(ID_KEYS), **ids}, set(ids), source)
    if any(k in given for k in ID_KEYS):
        props = {k: v for k, v in props.items() if k not in ID_KEYS}
    return build_config({**props, **given})
