"""The proxy's one producer: records produced over HTTP go through it (acks=all, Java's murmur2
partitioner, so a key lands where a Java producer would put it).  A thread serves its delivery
reports; each report wakes the request that produced the record, on the Trio loop."""

from __future__ import annotations

import functools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import trio
from confluent_kafka import KafkaError, KafkaException, Producer

from pykafkad.rest_proxy.cluster_view import kafka_problem

log = logging.getLogger(__name__)

POLL_S = 0.1
# librdkafka's own retries end within this; a request waits no longer for its reports.
DELIVERY_TIMEOUT_MS = 30_000
METADATA_TIMEOUT_S = 10.0
PARTITIONS_CACHE_S = 5.0


@dataclass
class Outcome:
    """One record's answer: where it went, or why not (KafkaError)."""
    partition: int | None = None
    offset: int | None = None
    timestamp: int | None = None
    error: KafkaError | None = None


@dataclass(frozen=True)
class OutgoingRecord:
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None = None
    timestamp: int | None = None


class RecordProducer:
    def __init__(self, client: dict[str, Any]) -> None:
        # linger.ms 1: a request's records come together already; waiting longer only adds latency.
        self._producer = Producer({**client, "acks": "all", "partitioner": "murmur2_random", "linger.ms": 1,
                                   "delivery.timeout.ms": DELIVERY_TIMEOUT_MS})
        self._partitions: dict[str, tuple[float, set[int]]] = {}
        # Delivery reports served by the poller thread, not yet handed to the Trio loop.
        self._reports: list[tuple[Delivery, int, KafkaError | None, Any]] = []
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="rest-producer", daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._producer.poll(POLL_S)
            # The reports this poll served go to the Trio loop together: one wake-up per poll, not
            # one per record.
            if self._reports and self._token is not None:
                batch, self._reports = self._reports, []
                try:
                    self._token.run_sync_soon(_settle_all, batch)
                except trio.RunFinishedError:
                    return

    def _reports_of(self, delivery: Delivery, i: int, error: KafkaError | None, msg: Any) -> None:
        # On the poller thread, within poll().
        self._reports.append((delivery, i, error, msg))

    def close(self) -> None:
        self._producer.flush(DELIVERY_TIMEOUT_MS / 1000)
        self._stop.set()
        self._poller.join(5)

    def partitions(self, topic: str) -> set[int] | None:
        """The topic's partitions, as the producer sees them; None if there is no such topic.  An
        answer is kept a few seconds: a request of records should not cost a metadata request."""
        cached = self._partitions.get(topic)
        if cached is not None and time.monotonic() - cached[0] < PARTITIONS_CACHE_S:
            return cached[1]
        try:
            found = self._producer.list_topics(topic, timeout=METADATA_TIMEOUT_S).topics.get(topic)
        except KafkaException as e:
            raise kafka_problem(e) from None
        if found is None or found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            self._partitions.pop(topic, None)
            return None
        if found.error is not None and not found.partitions:
            raise kafka_problem(found.error)
        self._partitions[topic] = (time.monotonic(), set(found.partitions))
        return set(found.partitions)

    async def produce(self, topic: str, records: list[OutgoingRecord]) -> list[Outcome]:
        """Each record produced, in order; returns once every one has its answer."""
        return await (await self.send(topic, records)).outcomes()

    async def send(self, topic: str, records: list[OutgoingRecord]) -> Delivery:
        """The records handed to the producer, in order (waiting only while its queue is full); their
        answers come through the Delivery returned."""
        delivery = Delivery(len(records))
        self._token = trio.lowlevel.current_trio_token()
        reports = self._reports_of

        for i, record in enumerate(records):
            kwargs: dict[str, Any] = {"key": record.key, "value": record.value,
                                      "on_delivery": functools.partial(reports, delivery, i)}
            if record.partition is not None:
                kwargs["partition"] = record.partition
            if record.headers:
                kwargs["headers"] = record.headers
            if record.timestamp is not None:
                kwargs["timestamp"] = record.timestamp
            while True:
                try:
                    self._producer.produce(topic, **kwargs)
                    break
                except BufferError:
                    # The producer's queue is full: wait for deliveries to make room.
                    await trio.sleep(0.01)
                except KafkaException as e:
                    delivery.settle(i, e.args[0], None)
                    break
        return delivery


def _settle_all(reports: list[tuple[Delivery, int, KafkaError | None, Any]]) -> None:
    for delivery, i, error, msg in reports:
        delivery.settle(i, error, msg)


class Delivery:
    """The answers of records handed to the producer, as their reports come in."""

    def __init__(self, count: int) -> None:
        self._outcomes = [Outcome() for _ in range(count)]
        self._left = count
        self._done = trio.Event()
        if count == 0:
            self._done.set()

    def settle(self, i: int, error: KafkaError | None, msg: Any) -> None:
        outcome = self._outcomes[i]
        if error is not None:
            outcome.error = error
        else:
            outcome.partition, outcome.offset = msg.partition(), msg.offset()
            outcome.timestamp = msg.timestamp()[1]
        self._left -= 1
        if self._left == 0:
            self._done.set()

    async def outcomes(self) -> list[Outcome]:
        """Each record's answer, once every one has come."""
        await self._done.wait()
        return self._outcomes
