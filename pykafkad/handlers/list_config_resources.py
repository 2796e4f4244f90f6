"""ListConfigResources (key 74, KIP-1142; v0 was ListClientMetricsResources): the resources that
configs can be described for, by type: topics, brokers and their loggers, groups (those known to the
coordinator and those with configs), client-metrics subscriptions.  Needs DESCRIBE_CONFIGS on the
cluster, as in Kafka."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.config_changes import GROUP_RESOURCE
from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, GROUP_RESOURCE
KNOWN = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


def _names(broker: Broker, resource_type: int) -> list[str]:
    if resource_type == TOPIC:
        return sorted(broker.metadata.topics)
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(b) for b in sorted(broker.metadata.brokers)]
    if resource_type == GROUP:
        return sorted(set(broker.groups.group_ids()) | set(broker.metadata.group_configs))
    return sorted(broker.metadata.client_metrics)  # CLIENT_METRICS


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "config_resources": []}
    if not cluster_allowed(broker, ctx, Operation.DESCRIBE_CONFIGS):
        return {**answer, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
    wanted = list(body.get("resource_types") or []) if ctx.api_version >= 1 else [CLIENT_METRICS]
    if any(t not in KNOWN for t in wanted):
        return {**answer, "error_code": ErrorCode.UNSUPPORTED_VERSION}
    answer["config_resources"] = [{"resource_name": name, "resource_type": t}
                                  for t in (wanted or KNOWN) for name in _names(broker, t)]
    return answer


APIS = [Api(74, "ListConfigResources", 0, 1, handle)]
