"""One v2 consumer instance: a librdkafka consumer that lives on this proxy between HTTP requests,
as Confluent's stateful consumers do.  Its calls block, so each runs on a worker thread, one at a
time per instance (the lock)."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_STORED,
    Consumer,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.cluster_view import AUTHORIZATION_FAILURES, kafka_problem

log = logging.getLogger(__name__)

# How long a records request polls at most in one call, so that the lock is given up now and then.
POLL_SLICE_S = 0.5
COMMITTED_TIMEOUT_S = 30.0
# What a coordinator answers while it moves or loads; librdkafka does not mark them retriable.
COORDINATOR_MOVING = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                      KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError._TIMED_OUT, KafkaError._WAIT_COORD)


@dataclass
class ConsumerSettings:
    """What POST /consumers/{group} may set, with Confluent's defaults."""
    format: str = "binary"
    auto_offset_reset: str = "latest"
    auto_commit: bool = True
    fetch_min_bytes: int | None = None
    request_timeout_ms: int = 1000


@dataclass
class FetchedRecord:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


class ConsumerInstance:
    def __init__(self, client: dict[str, Any], group: str, name: str, settings: ConsumerSettings) -> None:
        self.group = group
        self.name = name
        self.settings = settings
        config: dict[str, Any] = {**client, "group.id": group, "client.id": f"pykafkad-rest-{name}",
                                  "auto.offset.reset": settings.auto_offset_reset,
                                  "enable.auto.commit": settings.auto_commit}
        if settings.fetch_min_bytes is not None:
            config["fetch.min.bytes"] = settings.fetch_min_bytes
        self._consumer = Consumer(config)
        self._lock = threading.Lock()
        self.last_used = time.monotonic()
        self.topics: list[str] = []
        self.pattern: str | None = None
        self._manual: dict[tuple[str, int], int] | None = None  # assigned by hand: partition -> start offset
        self.closed = False
        self.owner: str | None = None  # the principal that made it (None: no authentication)

    def touch(self) -> None:
        self.last_used = time.monotonic()

    @property
    def busy(self) -> bool:
        """A call is running (a records request between its polls counts as used by ``touch``)."""
        return self._lock.locked()

    def close(self) -> None:
        """Leave the group and free the consumer (commits first if auto commit is on)."""
        with self._lock:
            if not self.closed:
                self.closed = True
                self._consumer.close()

    def _check_open(self) -> None:
        if self.closed:
            raise rest_errors.consumer_instance_not_found(self.group, self.name)

    # -- subscription and assignment -----------------------------------------------------------

    def subscribe(self, topics: list[str] | None, pattern: str | None) -> None:
        with self._lock:
            self._check_open()
            if self._manual is not None:
                raise rest_errors.illegal_state("Subscription to topics, partitions and pattern are mutually "
                                                "exclusive (this instance has partitions assigned)")
            if (self.topics or self.pattern) and (topics != self.topics or pattern != self.pattern):
                raise rest_errors.consumer_already_subscribed()
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as e:
                    raise rest_errors.unprocessable(f"topic_pattern is not a regular expression: {e}") from None
                # librdkafka takes a name starting with ^ as a regular expression.
                targets = [pattern if pattern.startswith("^") else "^" + pattern]
            else:
                targets = list(topics or [])
            try:
                self._consumer.subscribe(targets)
            except KafkaException as e:
                raise kafka_problem(e) from None
            self.topics, self.pattern = list(topics or []), pattern

    def unsubscribe(self) -> None:
        with self._lock:
            self._check_open()
            self._consumer.unsubscribe()
            self.topics, self.pattern = [], None

    def assign(self, partitions: list[tuple[str, int]]) -> None:
        with self._lock:
            self._check_open()
            if self.topics or self.pattern:
                raise rest_errors.illegal_state("Subscription to topics, partitions and pattern are mutually "
                                                "exclusive (this instance is subscribed)")
            # librdkafka keeps quiet about a partition assigned by hand that its caller may not see
            # (the metadata refuses it): asked here, the refusal is the caller's answer.
            for topic in sorted({t for t, _ in partitions}):
                try:
                    found = self._consumer.list_topics(topic, timeout=10).topics.get(topic)
                except KafkaException as e:
                    raise kafka_problem(e) from None
                if found is not None and found.error is not None and found.error.code() in AUTHORIZATION_FAILURES:
                    raise kafka_problem(found.error)
            # Each starts at its committed offset, else where auto.offset.reset says.  Asked here
            # rather than left to librdkafka (OFFSET_STORED): an offset fetch answered NOT_COORDINATOR
            # (a coordinator still loading) left its partition without a position for good.
            committed = {(tp.topic, tp.partition): tp.offset for tp in self._committed_with_retries(partitions)}
            reset = {"earliest": OFFSET_BEGINNING, "latest": OFFSET_END}.get(self.settings.auto_offset_reset,
                                                                             OFFSET_STORED)
            self._manual = {tp: committed.get(tp, -1) if committed.get(tp, -1) >= 0 else reset
                            for tp in partitions}
            self._apply_manual()

    def _committed_with_retries(self, partitions: list[tuple[str, int]]) -> list[TopicPartition]:
        deadline = time.monotonic() + COMMITTED_TIMEOUT_S
        while True:
            try:
                return list(self._consumer.committed([TopicPartition(t, p) for t, p in partitions], timeout=5))
            except KafkaException as e:
                error = e.args[0]
                passing = error.retriable() or error.code() in COORDINATOR_MOVING
                if not passing or time.monotonic() > deadline:
                    raise kafka_problem(e) from None
                time.sleep(0.2)

    def _apply_manual(self) -> None:
        assert self._manual is not None
        try:
            self._consumer.assign([TopicPartition(t, p, o) for (t, p), o in self._manual.items()])
        except KafkaException as e:
            raise kafka_problem(e) from None

    def assignment(self) -> list[tuple[str, int]]:
        with self._lock:
            self._check_open()
            if self._manual is not None:
                return list(self._manual)
            try:
                return [(tp.topic, tp.partition) for tp in self._consumer.assignment()]
            except KafkaException as e:
                raise kafka_problem(e) from None

    # -- positions -------------------------------------------------------------------------------

    def seek(self, offsets: list[tuple[str, int, int]]) -> None:
        """Move the next records read to these offsets (OFFSET_BEGINNING / OFFSET_END too)."""
        with self._lock:
            self._check_open()
            current = set(self._manual) if self._manual is not None else {
                (tp.topic, tp.partition) for tp in self._consumer.assignment()}
            for topic, partition, _ in offsets:
                if (topic, partition) not in current:
                    raise rest_errors.illegal_state(f"No current assignment for partition {topic}-{partition}")
            if self._manual is not None:
                # A partition assigned by hand starts where asked once assigned again.
                for topic, partition, offset in offsets:
                    self._manual[(topic, partition)] = offset
                self._apply_manual()
                return
            for topic, partition, offset in offsets:
                try:
                    self._consumer.seek(TopicPartition(topic, partition, offset))
                except KafkaException as e:
                    raise rest_errors.illegal_state(f"cannot seek {topic}-{partition}: {e.args[0].str()}") from None

    def seek_to(self, partitions: list[tuple[str, int]], end: bool) -> None:
        self.seek([(t, p, OFFSET_END if end else OFFSET_BEGINNING) for t, p in partitions])

    # -- records and offsets -----------------------------------------------------------------------

    def poll(self, timeout_s: float, max_bytes: int) -> list[FetchedRecord]:
        """Records from the current position on: those that arrive within ``timeout_s`` (at least
        one poll), up to about ``max_bytes``."""
        if not (self.topics or self.pattern or self._manual):
            raise rest_errors.illegal_state("Consumer is not subscribed to any topics or assigned any partitions")
        deadline = time.monotonic() + timeout_s
        got: list[FetchedRecord] = []
        size = 0
        while True:
            with self._lock:
                self._check_open()
                self.touch()
                # What is fetched already, at once; and only when nothing is, wait for a first record
                # (consume(n, timeout) waits for n records or the whole timeout).
                batch = self._consumer.consume(500, 0)
                if not batch and not got:
                    batch = self._consumer.consume(1, max(0.0, min(POLL_SLICE_S, deadline - time.monotonic())))
            for msg in batch:
                error = msg.error()
                if error is not None:
                    # librdkafka reports what it retries itself (a coordinator moving, a topic not
                    # there yet) as events; only a fatal one ends the request.
                    if error.fatal():
                        raise rest_errors.kafka_error(error.str(), retriable=False)
                    if error.code() in AUTHORIZATION_FAILURES:
                        raise kafka_problem(error)
                    log.debug("rest proxy: %s/%s: %s", self.group, self.name, error.str())
                    continue
                record = FetchedRecord(msg.topic(), msg.partition(), msg.offset(), msg.key(), msg.value(),
                                       msg.timestamp()[1], list(msg.headers() or []))
                got.append(record)
                size += len(record.key or b"") + len(record.value or b"")
                if self._manual is not None:
                    # Assigned again for a seek elsewhere, this partition goes on from here.
                    self._manual[(record.topic, record.partition)] = record.offset + 1
            if got and (size >= max_bytes or not batch):
                return got
            if size >= max_bytes or time.monotonic() >= deadline:
                return got

    def rewind(self, records: list[FetchedRecord]) -> None:
        """Read these records again next time: each partition back to its first one here."""
        first: dict[tuple[str, int], int] = {}
        for record in records:
            first.setdefault((record.topic, record.partition), record.offset)
        with self._lock:
            if self.closed:
                return
            if self._manual is not None:
                self._manual.update(first)
                self._apply_manual()
                return
            for (topic, partition), offset in first.items():
                try:
                    self._consumer.seek(TopicPartition(topic, partition, offset))
                except KafkaException as e:
                    log.warning("rest proxy: %s/%s: cannot go back to %s-%d@%d: %s", self.group, self.name,
                                topic, partition, offset, e.args[0].str())

    def commit(self, offsets: list[tuple[str, int, int, str | None]] | None) -> None:
        """Commit these offsets, or with None every record read so far."""
        with self._lock:
            self._check_open()
            try:
                if offsets is None:
                    self._consumer.commit(asynchronous=False)
                else:
                    self._consumer.commit(offsets=[TopicPartition(t, p, o, metadata=m) if m is not None
                                                   else TopicPartition(t, p, o) for t, p, o, m in offsets],
                                          asynchronous=False)
            except KafkaException as e:
                if e.args[0].code() == KafkaError._NO_OFFSET:
                    return  # nothing read since the last commit
                raise kafka_problem(e) from None

    def committed(self, partitions: list[tuple[str, int]]) -> list[tuple[str, int, int, str]]:
        with self._lock:
            self._check_open()
            found = self._committed_with_retries(partitions)
        return [(tp.topic, tp.partition, tp.offset, tp.metadata or "") for tp in found]

