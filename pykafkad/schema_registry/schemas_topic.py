"""The registry's store: the compacted ``_schemas`` topic, reached as any Kafka client reaches a
cluster (librdkafka through confluent-kafka), so the registry runs the same inside the broker and
against any other Kafka.

One reader thread follows the topic's single partition from its start (read_committed) and hands
each record to the Trio loop, which applies it to the ``RegistryState`` it owns.  The registry
serves only once it has read the topic up to the end it had at start.

Writes are transactions of one transactional id that every registry instance on the topic shares.
Starting a producer with it fences whichever instance wrote before; the new writer then reads the
topic to its last stable offset before it decides anything (an id, a version number).  A decision
made on a state that another instance has since changed cannot commit: that instance fenced this
one first, so the write fails, and ``change`` starts again from the new state.  However many
instances run, an id is handed out once.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import trio
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.schema_registry.errors import RegistryError, store_error, store_timeout
from pykafkad.schema_registry.registry_state import RegistryState

log = logging.getLogger(__name__)

DEFAULT_TOPIC = "_schemas"
# Confluent's kafkastore.topic.replication.factor; fewer brokers than this get one replica each.
REPLICATION_FACTOR = 3
INIT_TIMEOUT_S = 60.0
WRITE_TIMEOUT_S = 30.0
POLL_S = 0.2
# Fenced this many times in a row by other instances, a write gives up (50001).  Before it starts
# writing again it waits a random, growing while, so that two busy instances do not fence each
# other's every write.
FENCED_RETRIES = 8
FENCED_BACKOFF_S = (0.02, 0.1)
FENCED_BACKOFF_MAX_S = 2.0

T = TypeVar("T")
Records = list[tuple[dict[str, Any], dict[str, Any] | None]]


class _Fenced(Exception):
    """Another instance started writing since this one's producer did: decide again."""


# What a partition's leader answers for a topic it has not made yet.
_NOT_THERE_YET = (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION, KafkaError._UNKNOWN_TOPIC,
                  KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)


class StoreStartError(Exception):
    """The registry cannot use its topic: one line saying why and what to do."""


def _encode(value: dict[str, Any] | None) -> bytes | None:
    return None if value is None else json.dumps(value, separators=(",", ":")).encode()


class SchemasTopic:
    def __init__(self, client: dict[str, Any], topic: str, state: RegistryState,
                 replication_factor: int | None = None) -> None:
        self.client = {"logger": logging.getLogger("librdkafka"), **client}
        self.topic = topic
        # None: as Confluent's registry, three replicas or as many as there are brokers.  A number
        # is required: the topic is created only once that many brokers are up.
        self.replication_factor = replication_factor
        self.state = state
        self._position = -1  # the reader's next offset, as of its last poll
        self._end = -1  # the topic's end as of the reader's last fetch (-1: not known yet)
        # The Kafka cluster's id, read when the topic is checked at start (GET /v1/metadata/id).
        self.cluster_id: str | None = None
        self._moved = trio.Event()
        self._stop = threading.Event()
        self._producer: Producer | None = None
        self._write_lock = trio.Lock()
        self.transactional_id = f"pykafkad-schema-registry-{topic}"
        # Catching up for broker-side validation: one read to the end at a time, shared by whoever
        # asked while it ran (the trio.current_time() it started at, and its done event).
        self._catch_up: tuple[float, trio.Event] | None = None
        self._caught_up_at = -1.0

    # -- start -----------------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Make sure the topic exists, read it to its current end, then follow it until cancelled."""
        await trio.to_thread.run_sync(self._ensure_topic)
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

    def _ensure_topic(self) -> None:
        admin = AdminClient(self.client)
        try:
            metadata = admin.list_topics(timeout=INIT_TIMEOUT_S)
        except KafkaException as e:
            raise StoreStartError(f"cannot reach the cluster at {self.client.get('bootstrap.servers')}: "
                                  f"{e.args[0].str()}; is a broker running there?") from None
        self.cluster_id = metadata.cluster_id
        found = metadata.topics.get(self.topic)
        if found is not None and found.error is None:
            if len(found.partitions) != 1:
                raise StoreStartError(f"topic {self.topic} has {len(found.partitions)} partitions; the registry "
                                      "needs exactly one (delete it or set schema.registry.topic)")
            return
        replicas = self.replication_factor or min(REPLICATION_FACTOR, max(1, len(metadata.brokers)))
        deadline = time.monotonic() + INIT_TIMEOUT_S
        while True:
            futures = admin.create_topics([NewTopic(self.topic, 1, replicas, config={"cleanup.policy": "compact"})])
            try:
                futures[self.topic].result(INIT_TIMEOUT_S)
                log.info("schema registry: created topic %s (compacted, %d replica(s))", self.topic, replicas)
                break
            except KafkaException as e:
                code = e.args[0].code()
                if code == KafkaError.TOPIC_ALREADY_EXISTS:
                    break
                if code != KafkaError.INVALID_REPLICATION_FACTOR or time.monotonic() > deadline:
                    raise StoreStartError(f"cannot create topic {self.topic} with {replicas} replica(s): "
                                          f"{e.args[0].str()}") from None
            # Not that many brokers up yet (a cluster starting): wait for them, as Kafka's internal topics do.
            time.sleep(1.0)
        while time.monotonic() < deadline:
            topic = admin.list_topics(self.topic, timeout=10).topics.get(self.topic)
            if topic is not None and topic.error is None and all(p.leader >= 0 for p in topic.partitions.values()):
                return
            time.sleep(0.1)
        raise StoreStartError(f"topic {self.topic} has no leader after {INIT_TIMEOUT_S:.0f} s")

    def _end_offset(self) -> int:
        # A consumer of its own each time: one kept for these questions answered a stale end now and
        # then (an id handed out twice in test_two_instances_on_one_topic_never_hand_out_one_id_twice).
        consumer = Consumer({**self.client, "group.id": "pykafkad-schema-registry", "enable.auto.commit": False,
                             "isolation.level": "read_committed"})
        deadline = time.monotonic() + INIT_TIMEOUT_S
        try:
            while True:
                try:
                    # read_committed: the high end answered is the last stable offset.
                    return consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=INIT_TIMEOUT_S)[1]
                except KafkaException as e:
                    # A topic just created: its leader may not have made the partition yet.
                    if e.args[0].code() not in _NOT_THERE_YET or time.monotonic() > deadline:
                        raise StoreStartError(f"cannot read the end of {self.topic}: {e.args[0].str()}") from None
                time.sleep(0.1)
        finally:
            consumer.close()

    async def caught_up(self, since: float) -> None:
        """Return once the state has read every write committed before ``since`` (a
        ``trio.current_time()``): a read to the topic's end that started after ``since`` answers it,
        so a burst of questions costs one read.  StoreStartError or RegistryError if the topic
        cannot be read."""
        while self._caught_up_at < since:
            if self._catch_up is None:
                started, done = trio.current_time(), trio.Event()
                self._catch_up = (started, done)
                try:
                    await self._read_to(await trio.to_thread.run_sync(self._end_offset))
                    self._caught_up_at = max(self._caught_up_at, started)
                finally:
                    self._catch_up = None
                    done.set()
            else:
                started, done = self._catch_up
                await done.wait()
                if self._caught_up_at < started:
                    # That read failed: this caller tries its own.
                    continue

    # -- the reader thread -------------------------------------------------------------------------

    def _read(self, token: trio.lowlevel.TrioToken) -> None:
        consumer = Consumer({**self.client, "group.id": "pykafkad-schema-registry", "enable.auto.commit": False,
                             "enable.partition.eof": False, "isolation.level": "read_committed"})
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
                # The high watermark of the last fetch (no request: librdkafka's cached answer).
                end = consumer.get_watermark_offsets(TopicPartition(self.topic, 0), cached=True)[1]
                try:
                    trio.from_thread.run_sync(self._applied, records, position, end, trio_token=token)
                except trio.RunFinishedError:
                    return
        finally:
            consumer.close()

    def lag(self) -> int | None:
        """Records between what the registry has read and the topic's end as of its last fetch."""
        if self._end < 0 or self._position < 0:
            return None
        return max(0, self._end - self._position)

    def _applied(self, records: list[tuple[int, bytes | None, bytes | None]], position: int, end: int) -> None:
        for offset, key, value in records:
            self.state.apply(offset, key, value)
        # librdkafka knows no position until its first fetch answers (OFFSET_INVALID, negative).
        if records:
            position = max(position, records[-1][0] + 1)
        if position > self._position:
            self._position = position
        if end >= 0:
            self._end = end
        self._moved.set()
        self._moved = trio.Event()

    # -- writes ------------------------------------------------------------------------------------

    async def change(self, decide: Callable[[], tuple[Records, T]]) -> T:
        """Run ``decide`` on a state that has read every committed write, and commit the records it
        returns (key, value or None for a tombstone) in one transaction; its result once they are
        applied.  ``decide`` may raise a RegistryError, and may run again if another instance wrote."""
        async with self._write_lock:
            for attempt in range(FENCED_RETRIES):
                if self._producer is None:
                    self._producer = await trio.to_thread.run_sync(self._new_producer)
                    await self._read_to(await trio.to_thread.run_sync(self._end_offset))
                records, result = decide()
                if not records:
                    return result
                try:
                    last = await trio.to_thread.run_sync(self._commit, self._producer, records)
                except RegistryError:
                    # Whatever state the transaction was left in, the next write starts a new producer.
                    self._producer = None
                    raise
                except _Fenced:
                    log.info("schema registry: another instance wrote to %s; reading it and deciding again",
                             self.topic)
                    self._producer = None
                    await trio.sleep(min(FENCED_BACKOFF_MAX_S, random.uniform(*FENCED_BACKOFF_S) * 2**attempt))
                    continue
                # Committed: answered once read back.  Not up to the last stable offset: EndTxn is
                # answered before the markers are written, and until they are, that offset lies
                # before these records; the next decision would not see them (one id handed out
                # twice).
                await self._read_to(last + 1)
                return result
        raise store_error(f"other registry instances kept writing to {self.topic}; try again")

    async def _read_to(self, offset: int) -> None:
        with trio.move_on_after(WRITE_TIMEOUT_S) as scope:
            # An empty topic (offset 0) is read already, though librdkafka may not know a position yet.
            while offset > 0 and self._position < offset:
                await self._moved.wait()
        if scope.cancelled_caught:
            raise store_timeout(f"{self.topic} was not read up to offset {offset} in {WRITE_TIMEOUT_S:.0f} s")

    def _new_producer(self) -> Producer:
        producer = Producer({**self.client, "transactional.id": self.transactional_id, "acks": "all",
                             "linger.ms": 0})
        try:
            producer.init_transactions(WRITE_TIMEOUT_S)
        except KafkaException as e:
            raise store_error(f"cannot start writing to {self.topic}: {e.args[0].str()}") from None
        return producer

    def _commit(self, producer: Producer, records: Records) -> int:
        """The records in one transaction; the offset of the last.  A failure to deliver one fails
        the commit."""
        offsets: list[int] = []

        def delivered(error: KafkaError | None, msg: Any) -> None:
            if error is None:
                offsets.append(msg.offset())

        try:
            producer.begin_transaction()
            for key, value in records:
                producer.produce(self.topic, _encode(value), _encode(key), partition=0, on_delivery=delivered)
            producer.commit_transaction(WRITE_TIMEOUT_S)
            # The commit delivered every record; a report the commit did not serve, a poll does.
            deadline = time.monotonic() + WRITE_TIMEOUT_S
            while len(offsets) < len(records) and time.monotonic() < deadline:
                producer.poll(0.1)
        except KafkaException as e:
            error = e.args[0]
            if error.fatal() or error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                                 KafkaError.INVALID_PRODUCER_EPOCH):
                raise _Fenced() from None
            if error.txn_requires_abort():
                try:
                    producer.abort_transaction(WRITE_TIMEOUT_S)
                except KafkaException:
                    raise _Fenced() from None
            raise store_error(f"writing to {self.topic}: {error.str()}") from None
        if len(offsets) < len(records):
            raise store_error(f"writing to {self.topic}: committed, but {len(records) - len(offsets)} "
                              f"delivery report(s) missing after {WRITE_TIMEOUT_S:.0f} s")
        return max(offsets)
