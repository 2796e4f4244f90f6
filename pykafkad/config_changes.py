"""Live config changes: topic overrides, dynamic broker configs, client-metrics subscriptions and
group configs, validated, persisted and applied.

AlterConfigs replaces a resource's whole set of overrides; IncrementalAlterConfigs edits it
key by key.  Both end here, with the new complete set, which the controller writes to the
metadata store.  Every broker's metadata cache hears of it and applies it to its open logs at
once, with no restart (``apply_dynamic_broker_configs`` and the log manager), as Kafka applies
dynamic topic and log configs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pykafkad.client_metrics import validate_subscription
from pykafkad.config import BrokerConfig, ConfigError, parse_value
from pykafkad.errors import KafkaError
from pykafkad.group_config import validate_group_configs
from pykafkad.topic_config import TOPIC_KEYS, accepted_only, validate_topic_configs
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
CLIENT_METRICS_RESOURCE = 16
GROUP_RESOURCE = 32

# Broker keys that may change at run time: the broker-wide defaults of topic configs
# (Kafka's dynamic log configs), and the replication quotas.
DYNAMIC_BROKER_KEYS = frozenset(k for key in TOPIC_KEYS.values() for k in key.broker_synonyms) | {
    "leader.replication.throttled.rate", "follower.replication.throttled.rate"}


async def set_topic_configs(broker: Broker, name: str, overrides: dict[str, str | None], validate_only: bool) -> None:
    """Make ``overrides`` the topic's complete set of config overrides."""
    topic = broker.topic(name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.")
    problem = validate_topic_configs(overrides)
    if problem:
        raise KafkaError(ErrorCode.INVALID_CONFIG, problem)
    clean = {key: str(value).strip() for key, value in overrides.items()}
    if validate_only:
        return
    await broker.controller.set_topic_configs(topic, clean)
    log.info("topic %s configs are now %s", name, clean or "the broker defaults")
    warn_accepted_only(f"topic {name}", clean)


async def set_broker_configs(broker: Broker, resource: str, values: dict[str, str | None], validate_only: bool) -> None:
    """Make ``values`` the complete dynamic config of this broker ("<id>") or of the cluster default ("")."""
    if resource not in ("", str(broker.config.node_id)):
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {broker.config.node_id} or empty string, "
                         f"but received {resource}")
    fixed = sorted(k for k in values if k not in DYNAMIC_BROKER_KEYS)
    if fixed:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Cannot update these configs dynamically: {', '.join(fixed)}. "
                         "Set them in server.properties and restart the broker.")
    parsed = {}
    for key, raw in values.items():
        if raw is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for {key}")
        try:
            parsed[key] = parse_value(key, raw)
        except ConfigError as e:
            # Kafka's ConfigAdminManager answers a bad broker config with INVALID_REQUEST.
            raise KafkaError(ErrorCode.INVALID_REQUEST, str(e)) from None
    if validate_only:
        return
    await broker.controller.set_broker_configs(resource, {k: str(v) for k, v in values.items()})
    log.info("dynamic broker configs for %s are now %s", repr(resource) if resource else "the cluster default",
             values or "empty")
    warn_accepted_only(f"broker {resource}" if resource else "the cluster default", values)


def warn_accepted_only(what: str, configs: dict[str, Any]) -> None:
    """One WARN line naming the keys just set that pykafkad accepts with no effect."""
    unused = accepted_only(configs)
    if unused:
        log.warning("%s: %s accepted but with no effect in pykafkad (docs/configuration.md says why)", what,
                    ", ".join(unused))


def apply_dynamic_broker_configs(config: BrokerConfig, stored: dict[str, dict[str, str]]) -> None:
    """Load the stored dynamic broker configs (by resource: "" the cluster default, "<id>") into the running config."""
    config.dynamic_default = {k: parse_value(k, v) for k, v in stored.get("", {}).items()}
    config.dynamic_broker = {k: parse_value(k, v) for k, v in stored.get(str(config.node_id), {}).items()}


def current_overrides(broker: Broker, resource_type: int, name: str) -> dict[str, str]:
    """The overrides a resource has now (topic configs or dynamic broker configs), as strings."""
    if resource_type == TOPIC_RESOURCE:
        topic = broker.topic(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.")
        return dict(topic.configs)
    if resource_type == CLIENT_METRICS_RESOURCE:
        return dict(broker.metadata.client_metrics.get(name, {}))
    if resource_type == GROUP_RESOURCE:
        return dict(broker.metadata.group_configs.get(name, {}))
    return dict(broker.metadata.broker_configs.get(name, {}))


async def set_client_metrics(broker: Broker, name: str, values: dict[str, str | None], validate_only: bool) -> None:
    """Make ``values`` the complete set of keys of client-metrics subscription ``name``."""
    clean = validate_subscription(name, values)
    if validate_only:
        return
    await broker.controller.set_client_metrics(name, clean)
    log.info("client metrics subscription %s is now %s", name, clean or "deleted")


async def set_group_configs(broker: Broker, group: str, values: dict[str, str | None], validate_only: bool) -> None:
    """Make ``values`` the complete set of configs of group ``group`` (the group need not exist,
    as in Kafka)."""
    clean = validate_group_configs(group, values, broker.config)
    if validate_only:
        return
    await broker.controller.set_group_configs(group, clean)
    log.info("group %s configs are now %s", group, clean or "the broker defaults")


async def set_configs(broker: Broker, resource_type: int, name: str, values: dict[str, str | None],
                validate_only: bool) -> None:
    if resource_type == TOPIC_RESOURCE:
        await set_topic_configs(broker, name, values, validate_only)
    elif resource_type == BROKER_RESOURCE:
        await set_broker_configs(broker, name, values, validate_only)
    elif resource_type == CLIENT_METRICS_RESOURCE:
        await set_client_metrics(broker, name, values, validate_only)
    elif resource_type == GROUP_RESOURCE:
        await set_group_configs(broker, name, values, validate_only)
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Altering configs of resource type {resource_type} "
                         "is not supported.")
