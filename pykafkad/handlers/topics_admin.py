"""CreateTopics (19), DeleteTopics (20) and CreatePartitions (37): topic lifecycle, one result per topic,
each topic's partitions counted against its client's ``controller_mutation_rate`` (KIP-599)."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.metadata.store import StoreUnavailableError
from pykafkad.quota.mutation_quota import THROTTLED_MESSAGE, MutationQuota
from pykafkad.quota.throttling import quota_user
from pykafkad.topic_config import effective_topic_configs
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

ZERO_UUID = uuid.UUID(int=0)
DENIED = "Authorization failed."


def _as_kafka_error(e: KafkaError | StoreUnavailableError) -> KafkaError:
    """ZooKeeper unreachable for the connection timeout: retriable, and the change may or may not
    have been made (a write kazoo still held may reach ZooKeeper when it is back)."""
    if isinstance(e, KafkaError):
        return e
    return KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"The metadata store is unavailable ({e}); look whether "
                                                   "the change happened before trying again.")


def _topic_allowed(broker: Broker, ctx: RequestContext, operation: Operation, name: str) -> bool:
    return allowed(broker, ctx, operation, ResourceType.TOPIC, name)


def _mutation_quota(broker: Broker, ctx: RequestContext) -> MutationQuota:
    return broker.client_quotas.mutation_quota(quota_user(ctx.principal), ctx.client_id or "", ctx.api_key,
                                               ctx.api_version)


def _throttled(result: dict[str, Any]) -> None:
    result["error_code"], result["error_message"] = ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLED_MESSAGE


async def create_topics(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    counts = Counter(t["name"] for t in body["topics"])
    results = []
    # CREATE on the cluster creates any topic; otherwise CREATE on each topic is needed.
    create_any = cluster_allowed(broker, ctx, Operation.CREATE)
    quota = _mutation_quota(broker, ctx)
    for wanted in body["topics"]:
        name = wanted["name"]
        result: dict[str, Any] = {"name": name, "topic_id": ZERO_UUID, "error_code": ErrorCode.NONE,
                                  "error_message": None, "num_partitions": -1, "replication_factor": -1,
                                  "configs": None}
        results.append(result)
        if counts[name] > 1:
            result["error_code"] = ErrorCode.INVALID_REQUEST
            result["error_message"] = f"Create topics request from client `{ctx.client_id}` contains " \
                                      f"multiple entries for the following topics: {name}"
            continue
        if not create_any and not _topic_allowed(broker, ctx, Operation.CREATE, name):
            result["error_code"], result["error_message"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED, DENIED
            continue
        # An existing topic is reported as such, whatever the quota (as Kafka validates before it counts).
        if not body["validate_only"] and broker.topic(name) is None and quota.refuses():
            _throttled(result)
            continue
        assignments = [a["broker_ids"] for a in sorted(wanted["assignments"], key=lambda a: a["partition_index"])]
        configs = {c["name"]: c["value"] for c in wanted["configs"]}
        try:
            topic = await broker.controller.create_topic(
                name, wanted["num_partitions"], wanted["replication_factor"], configs,
                assignments or None, body["validate_only"],
            )
        except (KafkaError, StoreUnavailableError) as e:
            error = _as_kafka_error(e)
            result["error_code"] = error.code
            result["error_message"] = error.message
            continue
        if topic is not None:
            quota.record(len(topic.partitions))
            result["topic_id"] = topic.topic_id
            result["num_partitions"] = len(topic.partitions)
            result["replication_factor"] = len(topic.partitions[0].replicas)
            overrides = topic.configs
        else:  # validate_only: report what the topic would get
            result["num_partitions"] = (len(assignments) if assignments else
                                        wanted["num_partitions"] if wanted["num_partitions"] > 0
                                        else broker.config["num.partitions"])
            result["replication_factor"] = (len(assignments[0]) if assignments else
                                            wanted["replication_factor"] if wanted["replication_factor"] > 0
                                            else broker.config["default.replication.factor"])
            overrides = {k: v for k, v in configs.items() if v is not None}
        if not _topic_allowed(broker, ctx, Operation.DESCRIBE_CONFIGS, name):
            # Created, but its configs are not the principal's to see (Kafka's topic_config_error_code).
            result["topic_config_error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        result["configs"] = [
            {"name": c.name, "value": c.value, "read_only": False, "config_source": c.source,
             "is_sensitive": False}
            for c in effective_topic_configs(overrides, broker.config)
        ]
    return {"throttle_time_ms": quota.throttle_ms(), "topics": results}


async def delete_topics(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.api_version >= 6:
        wanted = [(t["name"], t["topic_id"]) for t in body["topics"]]
    else:
        wanted = [(name, ZERO_UUID) for name in body["topic_names"]]
    results = []
    quota = _mutation_quota(broker, ctx)
    for name, topic_id in wanted:
        result: dict[str, Any] = {"name": name, "topic_id": topic_id, "error_code": ErrorCode.NONE,
                                  "error_message": None}
        results.append(result)
        only_id = None
        if name is None:
            topic = broker.metadata.topics_by_id.get(topic_id)
            if topic is None:
                result["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID
                result["error_message"] = f"Topic id {topic_id} does not exist."
                continue
            name = result["name"] = topic.name
            # Asked for by id: delete that topic only, not one created under its name while
            # this waited for a change of the name to finish.
            only_id = topic_id
        if not _topic_allowed(broker, ctx, Operation.DELETE, name):
            result["error_code"], result["error_message"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED, DENIED
            continue
        existing = broker.topic(name)
        if existing is not None and quota.refuses():
            _throttled(result)
            result["topic_id"] = existing.topic_id
            continue
        try:
            deleted = await broker.controller.delete_topic(name, only_id)
        except (KafkaError, StoreUnavailableError) as e:
            error = _as_kafka_error(e)
            result["error_code"] = error.code
            result["error_message"] = error.message
            topic = broker.topic(name)
            if topic is not None:
                result["topic_id"] = topic.topic_id
            continue
        quota.record(len(deleted.partitions))
        result["topic_id"] = deleted.topic_id
    return {"throttle_time_ms": quota.throttle_ms(), "responses": results}


async def create_partitions(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    # As Kafka: a topic named twice is refused once with INVALID_REQUEST and none of its entries
    # is applied (which of them should win would be a guess).
    counts = Counter(t["name"] for t in body["topics"])
    results = []
    quota = _mutation_quota(broker, ctx)
    for name in counts:
        if counts[name] > 1:
            results.append({"name": name, "error_code": ErrorCode.INVALID_REQUEST,
                            "error_message": "Duplicate topic name."})
    for wanted in body["topics"]:
        if counts[wanted["name"]] > 1:
            continue
        result: dict[str, Any] = {"name": wanted["name"], "error_code": ErrorCode.NONE, "error_message": None}
        results.append(result)
        if not _topic_allowed(broker, ctx, Operation.ALTER, wanted["name"]):
            result["error_code"], result["error_message"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED, DENIED
            continue
        existing = broker.topic(wanted["name"])
        before = len(existing.partitions) if existing is not None else 0
        if not body["validate_only"] and existing is not None and wanted["count"] > before and quota.refuses():
            _throttled(result)
            continue
        assignments = wanted["assignments"]
        try:
            await broker.controller.add_partitions(
                wanted["name"], wanted["count"],
                [a["broker_ids"] for a in assignments] if assignments is not None else None,
                body["validate_only"],
            )
        except (KafkaError, StoreUnavailableError) as e:
            error = _as_kafka_error(e)
            result["error_code"] = error.code
            result["error_message"] = error.message
            continue
        if not body["validate_only"]:
            quota.record(wanted["count"] - before)
    return {"throttle_time_ms": quota.throttle_ms(), "results": results}


APIS = [
    Api(19, "CreateTopics", 2, 7, create_topics),
    Api(20, "DeleteTopics", 1, 6, delete_topics),
    Api(37, "CreatePartitions", 0, 3, create_partitions),
]
