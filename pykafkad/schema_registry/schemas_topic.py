"""The registry's store: the compacted ``_schemas`` topic, reached as any Kafka client reaches a
cluster (librdkafka through confluent-kafka), so the registry runs the same inside the broker and
against any other Kafka.

One reader thread follows the topic's single partition from its start and hands each record to the
Trio loop, which applies it to the ``RegistryState`` it owns.  A write produces with ``acks=all``
(idempotent) and returns once the reader has applied it, so an answer never runs ahead of the topic.
The registry serves only once it has read the topic up to the end it had at start.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import trio
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.schema_registry.errors import store_error, store_timeout
from pykafkad.schema_registry.registry_state import RegistryState

log = logging.getLogger(__name__)

DEFAULT_TOPIC = "_schemas"
# Confluent's kafkastore.topic.replication.factor; fewer brokers than this get one replica each.
REPLICATION_FACTOR = 3
INIT_TIMEOUT_S = 60.0
WRITE_TIMEOUT_S = 30.0
POLL_S = 0.2


class StoreStartError(Exception):
    """The registry cannot use its topic: one line saying why and what to do."""


def _encode(value: dict[str, Any] | None) -> bytes | None:
    return None if value is None else json.dumps(value, separators=(",", ":")).encode()


class SchemasTopic:
    def __init__(self, client: dict[str, Any], topic: str, state: RegistryState) -> None:
        self.client = {"logger": logging.getLogger("librdkafka"), **client}
        self.topic = topic
        self.state = state
        self._position = -1  # the reader's next offset, as of its last poll
        self._moved = trio.Event()
        self._stop = threading.Event()
        self._producer: Producer | None = None
        self._write_lock = trio.Lock()

    # -- start -----------------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Make sure the topic exists, read it to its current end, then follow it until cancelled."""
        await trio.to_thread.run_sync(self._ensure_topic)
        self._producer = Producer({**self.client, "acks": "all", "enable.idempotence": True, "linger.ms": 0})
        end = await trio.to_thread.run_sync(self._end_offset)
        token = trio.lowlevel.current_trio_token()
        reader = threading.Thread(target=self._read, args=(token,), name="schemas-reader", daemon=True)
        reader.start()
        try:
            with trio.move_on_after(INIT_TIMEOUT_S) as scope:
                while end > 0 and self._position < end:
                    await self._moved.wait()
            if scope.cancelled_caught:
                raise StoreStartError(f"could not read {self.topic} to its end ({end}) within {INIT_TIMEOUT_S:.0f} s")
            log.info("schema registry: read %s to offset %d: %d subject(s), highest id %d", self.topic, end,
                     len(self.state.subjects), self.state.max_id)
            task_status.started()
            await trio.sleep_forever()
        finally:
            self._stop.set()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(reader.join, 5.0)
                if self._producer is not None:
                    await trio.to_thread.run_sync(self._producer.flush, 5.0)

    def _ensure_topic(self) -> None:
        admin = AdminClient(self.client)
        try:
            metadata = admin.list_topics(timeout=INIT_TIMEOUT_S)
        except KafkaException as e:
            raise StoreStartError(f"cannot reach the cluster at {self.client.get('bootstrap.servers')}: "
                                  f"{e.args[0].str()}") from None
        found = metadata.topics.get(self.topic)
        if found is not None and found.error is None:
            if len(found.partitions) != 1:
                raise StoreStartError(f"topic {self.topic} has {len(found.partitions)} partitions; the registry "
                                      "needs exactly one (delete it or set schema.registry.topic)")
            return
        replicas = min(REPLICATION_FACTOR, max(1, len(metadata.brokers)))
        futures = admin.create_topics([NewTopic(self.topic, 1, replicas, config={"cleanup.policy": "compact"})])
        try:
            futures[self.topic].result(INIT_TIMEOUT_S)
            log.info("schema registry: created topic %s (compacted, %d replica(s))", self.topic, replicas)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise StoreStartError(f"cannot create topic {self.topic}: {e.args[0].str()}") from None
        deadline = time.monotonic() + INIT_TIMEOUT_S
        while time.monotonic() < deadline:
            topic = admin.list_topics(self.topic, timeout=10).topics.get(self.topic)
            if topic is not None and topic.error is None and all(p.leader >= 0 for p in topic.partitions.values()):
                return
            time.sleep(0.1)
        raise StoreStartError(f"topic {self.topic} has no leader after {INIT_TIMEOUT_S:.0f} s")

    def _end_offset(self) -> int:
        consumer = Consumer({**self.client, "group.id": "pykafkad-schema-registry", "enable.auto.commit": False})
        try:
            return consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=INIT_TIMEOUT_S)[1]
        except KafkaException as e:
            raise StoreStartError(f"cannot read the end of {self.topic}: {e.args[0].str()}") from None
        finally:
            consumer.close()

    # -- the reader thread -------------------------------------------------------------------------

    def _read(self, token: trio.lowlevel.TrioToken) -> None:
        consumer = Consumer({**self.client, "group.id": "pykafkad-schema-registry", "enable.auto.commit": False,
                             "enable.partition.eof": False})
        consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        try:
            while not self._stop.is_set():
                batch = consumer.consume(500, POLL_S)
                records = []
                for msg in batch:
                    if msg.error() is None:
                        records.append((msg.offset(), msg.key(), msg.value()))
                    elif msg.error().code() != KafkaError._PARTITION_EOF:
                        log.warning("schema registry: reading %s: %s", self.topic, msg.error().str())
                position = consumer.position([TopicPartition(self.topic, 0)])[0].offset
                try:
                    trio.from_thread.run_sync(self._applied, records, position, trio_token=token)
                except trio.RunFinishedError:
                    return
        finally:
            consumer.close()

    def _applied(self, records: list[tuple[int, bytes | None, bytes | None]], position: int) -> None:
        for offset, key, value in records:
            self.state.apply(offset, key, value)
        # librdkafka knows no position until its first fetch answers (OFFSET_INVALID, negative).
        if records:
            position = max(position, records[-1][0] + 1)
        if position > self._position:
            self._position = position
        self._moved.set()
        self._moved = trio.Event()

    # -- writes ------------------------------------------------------------------------------------

    def lock(self) -> trio.Lock:
        """Held across a decision and its write (an id handed out, a version numbered)."""
        return self._write_lock

    async def write(self, records: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
        """Produce ``records`` (key, value or None for a tombstone) and wait until they are applied."""
        assert self._producer is not None, "write before run() started"
        producer = self._producer
        last = await trio.to_thread.run_sync(self._produce, producer, records)
        with trio.move_on_after(WRITE_TIMEOUT_S) as scope:
            while self._position <= last:
                await self._moved.wait()
        if scope.cancelled_caught:
            raise store_timeout(f"the write to {self.topic} at offset {last} was not read back in "
                                f"{WRITE_TIMEOUT_S:.0f} s")

    def _produce(self, producer: Producer, records: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> int:
        results: list[Any] = []
        for key, value in records:
            producer.produce(self.topic, _encode(value), _encode(key), partition=0,
                             on_delivery=lambda err, msg: results.append(err or msg.offset()))
        producer.flush(WRITE_TIMEOUT_S)
        if len(results) < len(records):
            raise store_timeout(f"{self.topic} did not acknowledge the write within {WRITE_TIMEOUT_S:.0f} s")
        errors = [r for r in results if isinstance(r, KafkaError)]
        if errors:
            raise store_error(f"writing to {self.topic}: {errors[0].str()}")
        return max(int(r) for r in results)
