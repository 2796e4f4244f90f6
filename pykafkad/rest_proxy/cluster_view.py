"""What the proxy knows of its cluster: topics, partitions, brokers, configs and offsets, asked of
the cluster with librdkafka's admin client and a consumer that joins no group.  Each call blocks
(it runs on a worker thread) and raises RestError for what a caller asked wrongly."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from pykafkad.rest_proxy import rest_errors

TIMEOUT_S = 10.0
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]

    def v2(self) -> dict[str, Any]:
        return {"partition": self.partition, "leader": self.leader,
                "replicas": [{"broker": b, "leader": b == self.leader, "in_sync": b in self.isr}
                             for b in self.replicas]}


AUTHORIZATION_FAILURES = (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED,
                          KafkaError.CLUSTER_AUTHORIZATION_FAILED, KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)


def kafka_problem(e: KafkaException | KafkaError) -> rest_errors.RestError:
    """Kafka's error as the proxy answers it: a refusal of the cluster's ACLs is 403 40301."""
    error = e.args[0] if isinstance(e, KafkaException) else e
    if error.code() in AUTHORIZATION_FAILURES:
        return rest_errors.forbidden(error.str())
    return rest_errors.kafka_error(error.str(), retriable=error.retriable())


class ClusterView:
    def __init__(self, client: dict[str, Any]) -> None:
        self.client = client
        self.admin = AdminClient(client)
        # Watermarks only: no group is joined, nothing is committed.
        self._offsets = Consumer({**client, "group.id": "pykafkad-rest-offsets", "enable.auto.commit": False})
        self._offsets_lock = threading.Lock()

    def close(self) -> None:
        with self._offsets_lock:
            self._offsets.close()

    def _metadata(self, topic: str | None = None) -> Any:
        try:
            return self.admin.list_topics(topic, timeout=TIMEOUT_S)
        except KafkaException as e:
            raise kafka_problem(e) from None

    def cluster_id(self) -> str:
        return self._metadata().cluster_id or ""

    def topics(self) -> list[str]:
        """The topics a client lists: Kafka's internal ones left out, as Admin.listTopics does."""
        return sorted(t for t in self._metadata().topics if t not in INTERNAL_TOPICS)

    def brokers(self) -> list[int]:
        return sorted(self._metadata().brokers)

    def broker_hosts(self) -> dict[int, tuple[str, int]]:
        return {b.id: (b.host, b.port) for b in self._metadata().brokers.values()}

    def partitions(self, topic: str) -> list[PartitionInfo]:
        """The topic's partitions, or 40401 if there is no such topic."""
        found = self._metadata().topics.get(topic)
        if found is None or (found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
            raise rest_errors.topic_not_found(topic)
        if found.error is not None:
            raise kafka_problem(found.error)
        return [PartitionInfo(p.id, p.leader, list(p.replicas), list(p.isrs))
                for p in sorted(found.partitions.values(), key=lambda p: p.id)]

    def auto_create(self, topic: str) -> bool:
        """Create ``topic`` with the cluster's defaults if its brokers create topics on first use
        (auto.create.topics.enable), as a Java producer's first send would; whether it now exists."""
        metadata = self._metadata()
        if not metadata.brokers:
            return False
        broker = str(next(iter(metadata.brokers)))
        try:
            futures = self.admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, broker)])
            [entries] = [f.result(TIMEOUT_S) for f in futures.values()]
        except KafkaException as e:
            raise kafka_problem(e) from None
        setting = entries.get("auto.create.topics.enable")
        if setting is None or str(setting.value).lower() != "true":
            return False
        try:
            # -1, -1: num.partitions and default.replication.factor (KIP-464).
            self.admin.create_topics([NewTopic(topic, -1, -1)])[topic].result(TIMEOUT_S)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise kafka_problem(e) from None
        return True

    def partition(self, topic: str, partition: int) -> PartitionInfo:
        for info in self.partitions(topic):
            if info.partition == partition:
                return info
        raise rest_errors.partition_not_found(topic, partition)

    def topic_configs(self, topic: str) -> dict[str, str | None]:
        self.partitions(topic)
        futures = self.admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
        try:
            [entries] = [f.result(TIMEOUT_S) for f in futures.values()]
        except KafkaException as e:
            raise kafka_problem(e) from None
        return {name: entry.value for name, entry in sorted(entries.items())}

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        """The partition's first and next offsets."""
        self.partition(topic, partition)
        try:
            with self._offsets_lock:
                return self._offsets.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT_S)
        except KafkaException as e:
            raise kafka_problem(e) from None
