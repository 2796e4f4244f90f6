"""AlterConfigs (33) and IncrementalAlterConfigs (44): change topic and dynamic broker configs,
client-metrics subscriptions and group configs live."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.config_changes import (
    CLIENT_METRICS_RESOURCE,
    GROUP_RESOURCE,
    TOPIC_RESOURCE,
    current_overrides,
    set_configs,
)
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.describe_configs import config_denied
from pykafkad.topic_config import TOPIC_KEYS, topic_setting
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _result(resource: dict[str, Any], error: KafkaError | None = None) -> dict[str, Any]:
    return {"error_code": error.code if error else ErrorCode.NONE, "error_message": error.message if error else None,
            "resource_type": resource["resource_type"], "resource_name": resource["resource_name"]}


async def alter_configs(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    results = []
    for resource in body["resources"]:
        values = {c["name"]: c["value"] for c in resource["configs"]}
        try:
            _check_allowed(broker, ctx, resource)
            await set_configs(broker, resource["resource_type"], resource["resource_name"], values,
                              body["validate_only"])
        except KafkaError as e:
            results.append(_result(resource, e))
            continue
        results.append(_result(resource))
    return {"throttle_time_ms": 0, "responses": results}


def _check_allowed(broker: Broker, ctx: RequestContext, resource: dict[str, Any]) -> None:
    """ALTER_CONFIGS on the topic, or on the cluster for broker resources."""
    denied = config_denied(broker, ctx, resource["resource_type"], resource["resource_name"], Operation.ALTER_CONFIGS)
    if denied is not None:
        raise KafkaError(denied)


def _is_list(resource_type: int, name: str) -> bool:
    key = TOPIC_KEYS.get(name) if resource_type == TOPIC_RESOURCE else None
    return key is not None and key.type == "list"


def _edited(broker: Broker, resource: dict[str, Any]) -> dict[str, str | None]:
    rtype, rname = resource["resource_type"], resource["resource_name"]
    values: dict[str, str | None] = dict(current_overrides(broker, rtype, rname))
    seen = set()
    for change in resource["configs"]:
        name, op, value = change["name"], change["config_operation"], change["value"]
        if name in seen:
            if rtype == GROUP_RESOURCE:  # Kafka 4.4's words, for the resource added after the others
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Config {name} appears more than once in the request.")
        seen.add(name)
        if op == SET:
            values[name] = value
        elif op == DELETE:
            values.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            if rtype in (CLIENT_METRICS_RESOURCE, GROUP_RESOURCE):
                # Kafka 4.4's answer for any key of these, though it describes ``metrics``, ``match``
                # and ``streams.rack.aware.assignment.tags`` as lists.
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Can't {'APPEND' if op == APPEND else 'SUBTRACT'} "
                                 f"to key {name} because its type is not LIST.")
            if not _is_list(rtype, name):
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Config {name} is not a list: APPEND and SUBTRACT need a list-type config.")
            current = values.get(name) or topic_setting({}, broker.config, name) or ""
            items = [i for i in current.split(",") if i]
            given = [i.strip() for i in (value or "").split(",") if i.strip()]
            if op == APPEND:
                items += [i for i in given if i not in items]
            else:
                items = [i for i in items if i not in given]
            values[name] = ",".join(items)
        elif rtype == GROUP_RESOURCE:
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)  # what Kafka 4.4 answers, with no message
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {op} for {name}.")
    return values


async def incremental_alter_configs(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    results = []
    # A group named twice in one request is refused each time, as Kafka 4.4 refuses it.
    groups = [r["resource_name"] for r in body["resources"] if r["resource_type"] == GROUP_RESOURCE]
    for resource in body["resources"]:
        if resource["resource_type"] == GROUP_RESOURCE and groups.count(resource["resource_name"]) > 1:
            results.append(_result(resource, KafkaError(ErrorCode.INVALID_REQUEST,
                                                        "Each resource must appear at most once.")))
            continue
        try:
            _check_allowed(broker, ctx, resource)
            values = _edited(broker, resource)
            await set_configs(broker, resource["resource_type"], resource["resource_name"], values,
                              body["validate_only"])
        except KafkaError as e:
            results.append(_result(resource, e))
            continue
        results.append(_result(resource))
    return {"throttle_time_ms": 0, "responses": results}


APIS = [
    Api(33, "AlterConfigs", 0, 2, alter_configs),
    Api(44, "IncrementalAlterConfigs", 0, 1, incremental_alter_configs),
]
