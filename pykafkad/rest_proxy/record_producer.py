"""The proxy's one producer: records produced over HTTP go through it (acks=all, Java's murmur2
partitioner, so a key lands where a Java producer would put it).  A thread serves its delivery
reports; each report wakes the request that produced the record, on the Trio loop."""

from __future__ import annotations

import logging
import threading
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
        self._producer = Producer({**client, "acks": "all", "partitioner": "murmur2_random", "linger.ms": 5,
                                   "delivery.timeout.ms": DELIVERY_TIMEOUT_MS})
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="rest-producer", daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._producer.poll(POLL_S)

    def close(self) -> None:
        self._producer.flush(DELIVERY_TIMEOUT_MS / 1000)
        self._stop.set()
        self._poller.join(5)

    def partitions(self, topic: str) -> set[int] | None:
        """The topic's partitions, as the producer sees them; None if there is no such topic."""
        try:
            found = self._producer.list_topics(topic, timeout=METADATA_TIMEOUT_S).topics.get(topic)
        except KafkaException as e:
            raise kafka_problem(e) from None
        if found is None or found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return None
        if found.error is not None and not found.partitions:
            raise kafka_problem(found.error)
        return set(found.partitions)

    async def produce(self, topic: str, records: list[OutgoingRecord]) -> list[Outcome]:
        """Each record produced, in order; returns once every one has its answer."""
        if not records:
            return []
        token = trio.lowlevel.current_trio_token()
        outcomes = [Outcome() for _ in records]
        left = len(records)
        done = trio.Event()

        def settle(i: int, error: KafkaError | None, msg: Any) -> None:
            nonlocal left
            outcome = outcomes[i]
            if error is not None:
                outcome.error = error
            else:
                outcome.partition, outcome.offset = msg.partition(), msg.offset()
                outcome.timestamp = msg.timestamp()[1]
            left -= 1
            if left == 0:
                done.set()

        def report(i: int) -> Any:
            def delivered(error: KafkaError | None, msg: Any) -> None:
                try:
                    token.run_sync_soon(settle, i, error, msg)
                except trio.RunFinishedError:
                    pass
            return delivered

        for i, record in enumerate(records):
            kwargs: dict[str, Any] = {"key": record.key, "value": record.value, "on_delivery": report(i)}
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
                    settle(i, e.args[0], None)
                    break
        await done.wait()
        return outcomes
