"""DescribeConfigs (key 32): topic and broker configs, client-metrics subscriptions and group configs,
with their values, sources and synonyms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.client_metrics import KEYS as SUBSCRIPTION_KEYS
from pykafkad.config import KEYS, render_value
from pykafkad.config_changes import GROUP_RESOURCE
from pykafkad.group_config import describe_group_configs
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.topic_config import (
    ConfigSource,
    ConfigType,
    EffectiveConfig,
    Synonym,
    broker_synonym_group,
    effective_topic_configs,
)
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
CLIENT_METRICS = 16

_BROKER_TYPES = {"int": ConfigType.INT, "long": ConfigType.LONG, "short": ConfigType.SHORT,
                 "double": ConfigType.DOUBLE, "boolean": ConfigType.BOOLEAN, "string": ConfigType.STRING,
                 "list": ConfigType.LIST, "password": ConfigType.PASSWORD}
# pykafkad's own keys with no KafkaConfig counterpart (Kafka keeps its cluster id in
# meta.properties, not in a config): read at start-up, but Kafka describes no such config.
# super.users and allow.everyone.if.no.acl.found are the authorizer's own settings, which Kafka's
# DescribeConfigs does not list either; metrics.listener, the registry's, the REST proxy's and the logging
# keys are pykafkad's own.
_NOT_KAFKA_CONFIGS = frozenset({
    "cluster.id", "super.users", "allow.everyone.if.no.acl.found", "metrics.listener", "metrics.console.enable",
    "schema.registry.listener", "schema.registry.topic", "schema.registry.max.request.bytes",
    "rest.listener", "rest.schema.registry.url", "rest.max.request.bytes", "rest.producer.records.max",
    "rest.consumer.instance.timeout.ms", "rest.consumer.instances.max",
    "log4j.rootLogger", "logging.format", "logging.file", "logging.file.max.bytes", "logging.file.backups",
    "pykafkad.client.telemetry.max.series",
    # Kafka's internal configs (defined with defineInternal): read, but never described.
    "producer.id.expiration.check.interval.ms"})
# Kafka's replication quotas are dynamic-only configs (QuotaConfig), not KafkaConfig keys: described
# only when set as dynamic broker configs.
_DYNAMIC_ONLY = frozenset({"leader.replication.throttled.rate", "follower.replication.throttled.rate"})




def _entry(c: EffectiveConfig, read_only: bool, synonyms: bool) -> dict[str, Any]:
    # Passwords and keys (ssl.key.password, ssl.keystore.key...) are never shown, as Kafka hides them.
    sensitive = c.config_type == ConfigType.PASSWORD
    return {
        "name": c.name, "value": None if sensitive else c.value, "read_only": read_only,
        "config_source": c.source, "is_sensitive": sensitive, "config_type": c.config_type, "documentation": None,
        "synonyms": [{"name": s.name, "value": None if sensitive else s.value, "source": s.source}
                     for s in c.synonyms] if synonyms else [],
    }


def _broker_configs(broker: Broker) -> list[EffectiveConfig]:
    result = []
    for name, key in sorted(KEYS.items()):
        if name in _NOT_KAFKA_CONFIGS or key.internal:
            continue
        layers = broker.config.synonyms_of(name, broker_synonym_group(name))
        if name in _DYNAMIC_ONLY:
            layers = [layer for layer in layers if layer[0].startswith("DYNAMIC")]
            if not layers:
                continue
        synonyms = [Synonym(k, render_value(v), ConfigSource[src]) for src, k, v in layers]
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        config_type = _BROKER_TYPES.get(key.type, ConfigType.UNKNOWN)
        result.append(EffectiveConfig(name, render_value(broker.config[name]), source, synonyms, config_type))
    return result


def config_denied(broker: Broker, ctx: RequestContext, rtype: int, rname: str,
                  operation: Operation) -> ErrorCode | None:
    """The authorization error for a config resource, if the principal may not ``operation`` it
    (topics by topic, groups by group; brokers, their loggers and client-metrics subscriptions by the
    cluster)."""
    if rtype == TOPIC:
        ok = allowed(broker, ctx, operation, ResourceType.TOPIC, rname)
        return None if ok else ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if rtype == GROUP_RESOURCE:
        ok = allowed(broker, ctx, operation, ResourceType.GROUP, rname)
        return None if ok else ErrorCode.GROUP_AUTHORIZATION_FAILED
    if rtype in (BROKER, BROKER_LOGGER, CLIENT_METRICS) and not cluster_allowed(broker, ctx, operation):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None


def _subscription_configs(broker: Broker, name: str) -> list[EffectiveConfig]:
    """Every key of a client-metrics subscription, its default where unset; a name that is no
    subscription shows the defaults, as Kafka answers."""
    stored = broker.metadata.client_metrics.get(name, {})
    out = []
    for key in SUBSCRIPTION_KEYS:
        if key.name in stored:
            value = stored[key.name]
            out.append(EffectiveConfig(key.name, value, ConfigSource.CLIENT_METRICS_CONFIG,
                                       [Synonym(key.name, value, ConfigSource.CLIENT_METRICS_CONFIG)], key.config_type))
        else:  # a default has no synonym, as Kafka describes it
            out.append(EffectiveConfig(key.name, key.default, ConfigSource.DEFAULT_CONFIG, [], key.config_type))
    return out


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    results = []
    synonyms = body["include_synonyms"]
    for resource in body["resources"]:
        rtype, rname, keys = resource["resource_type"], resource["resource_name"], resource["configuration_keys"]
        result: dict[str, Any] = {"error_code": ErrorCode.NONE, "error_message": None,
                                  "resource_type": rtype, "resource_name": rname, "configs": []}
        results.append(result)
        denied = config_denied(broker, ctx, rtype, rname, Operation.DESCRIBE_CONFIGS)
        if denied is not None:
            result["error_code"] = denied
            continue
        if rtype == TOPIC:
            topic = broker.topic(rname)
            if topic is None:
                result["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                result["error_message"] = f"Topic {rname} does not exist."
                continue
            configs, read_only = effective_topic_configs(topic.configs, broker.config), False
        elif rtype == BROKER:
            if rname not in ("", str(broker.config.node_id)):
                result["error_code"] = ErrorCode.INVALID_REQUEST
                result["error_message"] = f"Unexpected broker id, expected {broker.config.node_id} or empty " \
                                          f"string, but received {rname}"
                continue
            configs, read_only = _broker_configs(broker), True
        elif rtype == CLIENT_METRICS:
            configs, read_only = _subscription_configs(broker, rname), False
        elif rtype == GROUP_RESOURCE:
            if not rname:
                result["error_code"] = ErrorCode.INVALID_REQUEST
                result["error_message"] = "Group name must not be empty"
                continue
            configs = describe_group_configs(broker.config, broker.metadata.group_configs.get(rname, {}))
            read_only = False
            result["error_message"] = ""  # Kafka 4.4 answers a group with an empty message, not null
        else:
            result["error_code"] = ErrorCode.INVALID_REQUEST
            result["error_message"] = f"Describing configs of resource type {rtype} is not supported."
            continue
        result["configs"] = [_entry(c, read_only, synonyms) for c in configs if keys is None or c.name in keys]
    return {"throttle_time_ms": 0, "results": results}


APIS = [Api(32, "DescribeConfigs", 1, 4, handle)]
