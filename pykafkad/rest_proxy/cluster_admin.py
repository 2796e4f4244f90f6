"""What API v3 asks of the cluster beyond metadata: the cluster's nodes, configs of brokers and
topics, creating and deleting topics, consumer groups with their offsets and lag, and ACLs, through
librdkafka's admin client.  Each call blocks (it runs on a worker thread) and raises RestError,
with Kafka's error mapped as Confluent's proxy maps it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

from pykafkad.rest_proxy import rest_errors

TIMEOUT_S = 30.0
# Kafka's refusals that Confluent's proxy answers 400 40002 (a request the cluster judged wrong).
BAD_REQUEST_CODES = {KafkaError.TOPIC_ALREADY_EXISTS, KafkaError.INVALID_REPLICATION_FACTOR,
                     KafkaError.INVALID_PARTITIONS, KafkaError.INVALID_REQUEST, KafkaError.INVALID_CONFIG,
                     KafkaError.POLICY_VIOLATION, KafkaError.UNSUPPORTED_VERSION, KafkaError.SECURITY_DISABLED,
                     KafkaError.TOPIC_EXCEPTION, KafkaError.TOPIC_DELETION_DISABLED,
                     KafkaError.INVALID_REPLICA_ASSIGNMENT}


def admin_problem(e: KafkaException) -> rest_errors.RestError:
    error = e.args[0]
    code = error.code()
    if code == KafkaError.UNKNOWN_TOPIC_OR_PART:
        return rest_errors.RestError(404, 40403, error.str())
    if code in BAD_REQUEST_CODES:
        return rest_errors.RestError(400, 40002, error.str())
    if code in (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED,
                KafkaError.GROUP_AUTHORIZATION_FAILED):
        return rest_errors.forbidden(error.str())
    if code == KafkaError.GROUP_ID_NOT_FOUND:
        return rest_errors.not_found(error.str())
    return rest_errors.kafka_error(error.str(), retriable=error.retriable())


def _result(future: Any) -> Any:
    try:
        return future.result(TIMEOUT_S)
    except KafkaException as e:
        raise admin_problem(e) from None


@dataclass(frozen=True)
class Node:
    id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class ConfigValue:
    name: str
    value: str | None
    is_default: bool
    is_read_only: bool
    is_sensitive: bool
    source: str
    synonyms: list[tuple[str, str | None, str]]


@dataclass(frozen=True)
class GroupMember:
    consumer_id: str
    instance_id: str | None
    client_id: str
    host: str
    assignments: list[tuple[str, int]]


@dataclass(frozen=True)
class Group:
    group_id: str
    is_simple: bool
    assignor: str
    state: str
    coordinator: int | None
    members: list[GroupMember]


def _source(entry: Any) -> str:
    try:
        name = ConfigSource(entry.source).name
    except ValueError:
        return "UNKNOWN"
    return "UNKNOWN" if name == "UNKNOWN_CONFIG" else name


class ClusterAdmin:
    def __init__(self, admin: AdminClient) -> None:
        self.admin = admin

    # -- the cluster ---------------------------------------------------------------------------

    def describe(self) -> tuple[str, int | None, list[Node]]:
        """The cluster's id, its controller's id, and its brokers."""
        found = _result(self.admin.describe_cluster(request_timeout=TIMEOUT_S))
        nodes = sorted((Node(n.id, n.host, n.port, n.rack) for n in found.nodes), key=lambda n: n.id)
        return found.cluster_id or "", found.controller.id if found.controller else None, nodes

    def configs(self, kind: ConfigResource.Type, name: str) -> list[ConfigValue]:
        futures = self.admin.describe_configs([ConfigResource(kind, name)], request_timeout=TIMEOUT_S)
        [entries] = [_result(f) for f in futures.values()]
        return [ConfigValue(e.name, None if e.is_sensitive else e.value, e.is_default, e.is_read_only,
                            e.is_sensitive, _source(e),
                            [(s.name, None if s.is_sensitive else s.value, _source(s))
                             for s in (e.synonyms or {}).values()])
                for e in sorted(entries.values(), key=lambda e: e.name)]

    def alter_configs(self, kind: ConfigResource.Type, name: str, changes: list[tuple[str, str | None, bool]],
                      validate_only: bool = False) -> None:
        """Set (``delete`` False) or reset each ``(name, value, delete)``, incrementally."""
        entries = [ConfigEntry(key, value, incremental_operation=AlterConfigOpType.DELETE if delete
                               else AlterConfigOpType.SET) for key, value, delete in changes]
        futures = self.admin.incremental_alter_configs([ConfigResource(kind, name, incremental_configs=entries)],
                                                       validate_only=validate_only, request_timeout=TIMEOUT_S)
        for future in futures.values():
            _result(future)

    # -- topics ----------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: dict[str, str],
                     assignments: list[list[int]] | None, validate_only: bool) -> None:
        if assignments is not None:
            topic = NewTopic(name, len(assignments), replica_assignment=assignments, config=configs)
        else:
            topic = NewTopic(name, partitions, replication_factor, config=configs)
        _result(self.admin.create_topics([topic], validate_only=validate_only,
                                         request_timeout=TIMEOUT_S)[name])

    def delete_topic(self, name: str) -> None:
        _result(self.admin.delete_topics([name], request_timeout=TIMEOUT_S)[name])

    def add_partitions(self, name: str, count: int) -> None:
        _result(self.admin.create_partitions([NewPartitions(name, count)], request_timeout=TIMEOUT_S)[name])

    # -- consumer groups -----------------------------------------------------------------------

    def group_ids(self) -> list[str]:
        found = _result(self.admin.list_consumer_groups(request_timeout=TIMEOUT_S))
        return sorted(g.group_id for g in found.valid)

    def group(self, group_id: str) -> Group:
        described = _result(self.admin.describe_consumer_groups([group_id], request_timeout=TIMEOUT_S)[group_id])
        state = getattr(described.state, "name", str(described.state))
        if state in ("DEAD", "UNKNOWN") and not described.members:
            raise rest_errors.not_found(f"Consumer group {group_id} not found.")
        members = sorted((GroupMember(m.member_id, m.group_instance_id, m.client_id, m.host,
                                      sorted((tp.topic, tp.partition) for tp in
                                             (m.assignment.topic_partitions if m.assignment else [])))
                          for m in described.members), key=lambda m: m.consumer_id)
        coordinator = described.coordinator.id if described.coordinator else None
        return Group(group_id, described.is_simple_consumer_group, described.partition_assignor or "",
                     "PREPARING_REBALANCE" if state == "PREPARING_REBALANCING" else
                     "COMPLETING_REBALANCE" if state == "COMPLETING_REBALANCING" else state,
                     coordinator, members)

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        request = [ConsumerGroupTopicPartitions(group_id)]
        found = _result(self.admin.list_consumer_group_offsets(request, request_timeout=TIMEOUT_S)[group_id])
        return {(tp.topic, tp.partition): tp.offset for tp in found.topic_partitions if tp.offset >= 0}

    def end_offsets(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        if not partitions:
            return {}
        futures = self.admin.list_offsets({TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions},
                                          request_timeout=TIMEOUT_S)
        return {(tp.topic, tp.partition): _result(f).offset for tp, f in futures.items()}

    # -- ACLs --------------------------------------------------------------------------------------

    def acls(self, query: AclBindingFilter) -> list[AclBinding]:
        return list(_result(self.admin.describe_acls(query, request_timeout=TIMEOUT_S)))

    def create_acls(self, bindings: list[AclBinding]) -> None:
        for future in self.admin.create_acls(bindings, request_timeout=TIMEOUT_S).values():
            _result(future)

    def delete_acls(self, query: AclBindingFilter) -> list[AclBinding]:
        [deleted] = [_result(f) for f in self.admin.delete_acls([query], request_timeout=TIMEOUT_S).values()]
        return list(deleted)
