"""A share group's dead-letter topic (Kafka 4.4's share-group DLQ, ``share.version`` 2): records a
consumer REJECTed, or that reached the delivery limit, are written to the topic the group names in
``errors.deadletterqueue.topic.name`` before they are archived.

Each dead letter carries Kafka's headers: ``__dlq.errors.topic``, ``__dlq.errors.partition``,
``__dlq.errors.offset``, ``__dlq.errors.group``, ``__dlq.errors.delivery.count`` and
``__dlq.errors.message`` (why); with ``errors.deadletterqueue.copy.record.enable`` the original key,
value and headers too, else headers only, as Kafka's default.  The topic is made on first use (with
``errors.deadletterqueue.group.enable=true``, the broker's partition count and replication factor);
a topic that exists without that setting is refused, as Kafka refuses it.  The write goes to the
dead-letter partition's leader with acks=all: in process when it is this broker, else as a Produce
request.  Until it is acknowledged the records stay ARCHIVING (in flight): nothing is dropped.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from prometheus_client import Counter

from pykafkad import _rust_log
from pykafkad._rust_log import LogError
from pykafkad.errors import KafkaError
from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLinkError, BrokerLinkPool
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.controller.controller import Controller
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

DLQ_ENABLE = "errors.deadletterqueue.group.enable"
PRODUCE, PRODUCE_VERSION = 0, 12
WRITE_TIMEOUT_S = 30.0
DEAD_LETTERED = Counter("kafka_server_sharegroupmetrics_deadletteredrecords",
                        "Records of share groups written to their dead-letter topic", ["group", "topic"])


class DeadLetterError(Exception):
    """The dead letters were not written; they stay in flight and are tried again."""


def dead_letter_records(records: list[tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
                        topic: str, index: int, group: str, counts: dict[int, int], reason: str,
                        copy: bool) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """The dead letters of ``records`` (decoded ``(offset, timestamp, key, value, headers)``)."""
    letters = []
    for offset, _ts, key, value, headers in records:
        errors = [("__dlq.errors.topic", topic.encode()), ("__dlq.errors.partition", str(index).encode()),
                  ("__dlq.errors.offset", str(offset).encode()), ("__dlq.errors.group", group.encode()),
                  ("__dlq.errors.delivery.count", str(counts.get(offset, 0)).encode()),
                  ("__dlq.errors.message", reason.encode())]
        if copy:
            letters.append((key, value, [*headers, *errors]))
        else:
            letters.append((None, None, errors))
    return letters


class DeadLetterWriter:
    """Writes share groups' dead letters to their topics."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager,
                 controller: Controller) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self.controller = controller
        self._links = BrokerLinkPool(f"share-dlq-{config.node_id}", ssl_context=inter_broker_context(config),
                                     sasl=inter_broker_sasl(config))

    async def _topic(self, name: str) -> None:
        """The dead-letter topic, made now if missing; DeadLetterError if it may not be one."""
        info = self.metadata.topics.get(name)
        if info is None:
            try:
                await self.controller.create_topic(name, configs={DLQ_ENABLE: "true"})
            except KafkaError as e:
                if e.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                    raise DeadLetterError(f"cannot create the dead-letter topic {name}: {e.message or e.code}") \
                        from e
            await self.metadata.wait_for(lambda: name in self.metadata.topics)
            info = self.metadata.topics[name]
        if str(info.configs.get(DLQ_ENABLE, "false")).lower() != "true":
            raise DeadLetterError(f"topic {name} is not a dead-letter topic for share groups: set {DLQ_ENABLE}=true "
                                  f"on it, or name another topic in errors.deadletterqueue.topic.name")

    async def write(self, group: str, dlq: str, source: tuple[str, int],
                    letters: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]) -> None:
        """Write ``letters`` to ``dlq`` and wait until they are acknowledged (acks=all)."""
        await self._topic(dlq)
        info = self.metadata.topics[dlq]
        index = source[1] % len(info.partitions)
        now = int(time.time() * 1000)
        batch = _rust_log.encode_batch(letters, now)
        leader = info.partitions[index].leader
        if leader == self.config.node_id:
            await self._append_here(dlq, index, batch, now)
        else:
            await self._produce(dlq, index, leader, batch)
        DEAD_LETTERED.labels(group, source[0]).inc(len(letters))

    async def _append_here(self, topic: str, index: int, batch: bytes, now: int) -> None:
        partition = self.replicas.get(topic, index)
        if partition is None:
            raise DeadLetterError(f"{topic}-{index} is not hosted here yet")
        min_isr = self.replicas.min_insync_replicas(partition)
        try:
            info = partition.append_as_leader(batch, now, min_isr)
            code = await partition.wait_for_acks(info.last_offset + 1, min_isr, WRITE_TIMEOUT_S)
        except (KafkaError, LogError) as e:
            raise DeadLetterError(f"appending to {topic}-{index}: {e}") from e
        if code != ErrorCode.NONE:
            raise DeadLetterError(f"appending to {topic}-{index}: {ErrorCode(code).name}")

    async def _produce(self, topic: str, index: int, leader: int, batch: bytes) -> None:
        broker = self.metadata.brokers.get(leader)
        if broker is None:
            raise DeadLetterError(f"{topic}-{index} has no live leader")
        body: dict[str, Any] = {"transactional_id": None, "acks": -1, "timeout_ms": int(WRITE_TIMEOUT_S * 1000),
                                "topic_data": [{"name": topic, "partition_data": [{"index": index, "records": batch}]}]}
        try:
            answer = await self._links.request(broker.host, broker.port, PRODUCE, PRODUCE_VERSION, body,
                                               WRITE_TIMEOUT_S + 5)
        except BrokerLinkError as e:
            raise DeadLetterError(f"producing to {topic}-{index} at broker {leader}: {e}") from e
        code = answer["responses"][0]["partition_responses"][0]["error_code"]
        if code != ErrorCode.NONE:
            raise DeadLetterError(f"producing to {topic}-{index} at broker {leader}: {ErrorCode(code).name}")
