"""The proxy's producer: records produced over HTTP go through it to the partitions' leaders, over
the project's own protocol client (``network_client``), acks=all.  A request's records for one
partition become one record batch, encoded in Rust, so a request of records costs one Produce
request per leader rather than a Python call per record.  Partitions are chosen as the Java and
librdkafka producers choose them: a key's by Kafka's murmur2, keyless records sticking to one
partition for a batch's worth of bytes (librdkafka's batch.size).  Retriable errors (a leader
moved, too few in-sync replicas, a connection lost) are retried with fresh metadata until
``DELIVERY_TIMEOUT_S``, as a producer's ``delivery.timeout.ms``; a batch the broker finds too large
is split and sent again.

Within one ``send`` the records keep their order per partition, and the Produce requests of
successive ``send`` calls are written in call order on one connection per broker, which the broker
answers in order: a stream of records (v3) keeps its order per partition."""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import trio

from pykafkad._rust_log import encode_batch, partition_of_key
from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.network_client import METADATA, NetworkClient, TopicLayout, Unreachable
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

PRODUCE = 0
# Produce v13 names topics by id; up to v12 by name, which is all the proxy needs.
PRODUCE_MAX_VERSION = 12
DELIVERY_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 30.0
METADATA_TIMEOUT_S = 10.0
# How long the partitions a request is checked against are trusted before the cluster is asked again.
PARTITIONS_FRESH_S = 5.0
RETRY_BACKOFF_S = 0.1
# A batch holds at most this much (librdkafka's batch.size); a larger record goes alone.
BATCH_BYTES = 1_000_000
# Keyless records stay on one partition for a batch's worth of bytes, as librdkafka's sticky
# partitioner keeps them for its batch; the next request's go to the next partition.
STICKY_BYTES = BATCH_BYTES
# Records handed over but not yet answered; beyond this, ``send`` waits (librdkafka's queue bound).
MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024
_RECORD_OVERHEAD = 24

RETRIABLE = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.REQUEST_TIMED_OUT, ErrorCode.BROKER_NOT_AVAILABLE, ErrorCode.NETWORK_EXCEPTION,
    ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
})
AUTHORIZATION_FAILURES = frozenset({ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED})


@dataclass(frozen=True)
class ProduceError:
    """Why a record was not produced: Kafka's error code and what it said."""
    code: int
    message: str

    @property
    def retriable(self) -> bool:
        return self.code in RETRIABLE

    @property
    def rest_code(self) -> int:
        """The error_code of the record's answer, as Confluent's proxy gives it."""
        if self.code == ErrorCode.SASL_AUTHENTICATION_FAILED:
            return 40101
        if self.code in AUTHORIZATION_FAILURES:
            return 40301
        return 50003 if self.retriable else 50002

    def __str__(self) -> str:
        return self.message


def produce_error(code: int, detail: str | None = None) -> ProduceError:
    try:
        name = ErrorCode(code).name
    except ValueError:
        name = f"error {code}"
    return ProduceError(code, f"{name}: {detail}" if detail else name)


@dataclass(slots=True)
class Outcome:
    """One record's answer: where it went, or why not."""
    partition: int | None = None
    offset: int | None = None
    timestamp: int | None = None
    error: ProduceError | None = None


@dataclass(slots=True)
class OutgoingRecord:
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None = None
    timestamp: int | None = None


@dataclass
class _Batch:
    """Records of one request bound for one partition, encoded as one record batch."""
    partition: int
    indexes: list[int]
    timestamp: int
    data: bytes
    records: list[OutgoingRecord] = field(repr=False)

    def split(self) -> list[_Batch]:
        half = len(self.indexes) // 2
        return [_encode(self.partition, self.indexes[:half], self.records[:half], self.timestamp),
                _encode(self.partition, self.indexes[half:], self.records[half:], self.timestamp)]


def _encode(partition: int, indexes: list[int], records: list[OutgoingRecord], timestamp: int) -> _Batch:
    rows: list[Any] = [(r.key, r.value, r.headers) if r.headers else (r.key, r.value) for r in records]
    return _Batch(partition, indexes, timestamp, encode_batch(rows, timestamp), records)


def _size(record: OutgoingRecord) -> int:
    size = _RECORD_OVERHEAD + len(record.key or b"") + len(record.value or b"")
    if record.headers:
        size += sum(len(k) + len(v or b"") + 8 for k, v in record.headers)
    return size


class RecordProducer:
    def __init__(self, client: dict[str, Any]) -> None:
        self._network = NetworkClient(client)
        self._nursery: trio.Nursery | None = None
        self._sticky = itertools.count()
        self._in_flight = 0
        self._room = trio.Event()

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Deliver what ``send`` hands over, until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self._network.run)
            self._nursery = nursery
            task_status.started()
            try:
                await trio.sleep_forever()
            finally:
                self._nursery = None

    # -- metadata ----------------------------------------------------------------------------------

    def known_partitions(self, topic: str) -> set[int] | None:
        """The topic's partitions if an answer of the last few seconds is at hand (no waiting);
        None if not.  A request naming a partition just added finds it after these seconds."""
        layout = self._network.layout(topic)
        if layout is None or layout.error != 0 or time.monotonic() - layout.at > PARTITIONS_FRESH_S:
            return None
        return set(layout.leaders)

    async def partitions(self, topic: str) -> set[int] | None:
        """The topic's partitions, asked of the cluster; None if there is no such topic."""
        try:
            layout = await self._network.refresh(topic, METADATA_TIMEOUT_S)
        except Unreachable as e:
            raise rest_errors.kafka_error(f"cannot ask the cluster about {topic}: {e}", retriable=True) from None
        if layout.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            return None
        if layout.error in AUTHORIZATION_FAILURES:
            raise rest_errors.forbidden(f"{ErrorCode(layout.error).name}: not authorized to access {topic}")
        if layout.error != 0 and not layout.leaders:
            raise rest_errors.kafka_error(produce_error(layout.error, topic).message, retriable=True)
        return set(layout.leaders)

    async def check_login(self) -> bool:
        """Whether the cluster takes this producer's login (its SASL credentials); RestError if
        the cluster cannot be asked."""
        try:
            await self._network.request(None, METADATA, {"topics": [], "allow_auto_topic_creation": False,
                                                         "include_topic_authorized_operations": False},
                                        METADATA_TIMEOUT_S)
        except Unreachable as e:
            if e.code == ErrorCode.SASL_AUTHENTICATION_FAILED:
                return False
            raise rest_errors.kafka_error(f"cannot reach the cluster: {e}", retriable=True) from None
        return True

    # -- producing ---------------------------------------------------------------------------------

    async def produce(self, topic: str, records: list[OutgoingRecord]) -> list[Outcome]:
        """Each record produced, in order; returns once every one has its answer."""
        return await (await self.send(topic, records)).outcomes()

    async def send(self, topic: str, records: list[OutgoingRecord]) -> Delivery:
        """The records handed over, their Produce requests written (waiting only while too much is
        in flight); their answers come through the Delivery returned."""
        delivery = Delivery(len(records))
        if not records:
            return delivery
        if self._nursery is None:
            for i in range(len(records)):
                delivery.settle(i, Outcome(error=produce_error(ErrorCode.NETWORK_EXCEPTION, "the proxy is stopping")))
            return delivery
        layout = self._network.layout(topic)
        if layout is None:
            try:
                layout = await self._network.refresh(topic, METADATA_TIMEOUT_S)
            except Unreachable as e:
                layout = TopicLayout(error=e.code)
        if not layout.leaders:
            error = produce_error(layout.error or ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic)
            delivery.settle_rest(error)
            return delivery
        sizes = [_size(r) for r in records]
        size = sum(sizes)
        while self._in_flight > MAX_IN_FLIGHT_BYTES:
            await self._room.wait()
        self._in_flight += size
        try:
            batches = self._batches(layout, records, sizes)
        except BaseException:
            self._release(size)
            raise
        attempt = _Attempt(topic, delivery, batches, time.monotonic() + DELIVERY_TIMEOUT_S, size)
        written = await self._write(attempt)
        self._nursery.start_soon(self._complete, attempt, written)
        return delivery

    def _release(self, size: int) -> None:
        self._in_flight -= size
        self._room.set()
        self._room = trio.Event()

    def _batches(self, layout: TopicLayout, records: list[OutgoingRecord], sizes: list[int]) -> list[_Batch]:
        count = len(layout.leaders)
        # Keyless records go to partitions with a leader, as the Java producer's sticky partitioner.
        available = sorted(p for p, leader in layout.leaders.items() if leader >= 0) or sorted(layout.leaders)
        sticky = available[next(self._sticky) % len(available)]
        sticky_bytes = 0
        now = int(time.time() * 1000)
        # partition -> (indexes, records, timestamp, bytes) of the batch being filled
        filling: dict[int, tuple[list[int], list[OutgoingRecord], int, int]] = {}
        done: list[_Batch] = []
        for i, record in enumerate(records):
            size = sizes[i]
            if record.partition is not None:
                partition = record.partition
            elif record.key is not None:
                partition = partition_of_key(record.key, count)
            else:
                if sticky_bytes >= STICKY_BYTES:
                    sticky = available[next(self._sticky) % len(available)]
                    sticky_bytes = 0
                partition = sticky
                sticky_bytes += size
            timestamp = now if record.timestamp is None else record.timestamp
            current = filling.get(partition)
            if current is not None and (current[2] != timestamp or current[3] + size > BATCH_BYTES):
                done.append(_encode(partition, current[0], current[1], current[2]))
                current = None
            if current is None:
                current = ([], [], timestamp, 0)
            current[0].append(i)
            current[1].append(record)
            filling[partition] = (current[0], current[1], timestamp, current[3] + size)
        done.extend(_encode(p, f[0], f[1], f[2]) for p, f in filling.items())
        return done

    async def _write(self, attempt: _Attempt) -> list[_Written]:
        """Produce requests for the attempt's batches written, one batch per partition per request
        (as Kafka requires), in order; batches whose leader is unknown or unreachable wait for the
        next round."""
        layout = self._network.layout(attempt.topic)
        if layout is None:
            try:
                layout = await self._network.refresh(attempt.topic, METADATA_TIMEOUT_S)
            except Unreachable as e:
                attempt.last_error = produce_error(e.code, str(e))
                layout = TopicLayout(error=e.code)
        if layout.error != 0 and layout.error not in RETRIABLE or layout.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            attempt.fail_all(produce_error(layout.error, attempt.topic))
            return []
        # leader -> requests, each a partition -> batch
        requests: dict[int, list[dict[int, _Batch]]] = {}
        # Taken out first: the batches that must wait go back in as they are met.
        batches, attempt.batches = attempt.batches, []
        for batch in batches:
            leader = layout.leaders.get(batch.partition, -1)
            if batch.partition not in layout.leaders and layout.leaders:
                attempt.fail(batch, produce_error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                f"{attempt.topic} has no partition {batch.partition}"))
                continue
            if leader < 0:
                attempt.retry(batch, produce_error(ErrorCode.LEADER_NOT_AVAILABLE,
                                                 f"{attempt.topic}-{batch.partition} has no leader now"))
                continue
            queue = requests.setdefault(leader, [])
            for request in queue:
                if batch.partition not in request:
                    request[batch.partition] = batch
                    break
            else:
                queue.append({batch.partition: batch})
        written = []
        for leader, queue in requests.items():
            for request in queue:
                body = {"transactional_id": None, "acks": -1, "timeout_ms": int(REQUEST_TIMEOUT_S * 1000),
                        "topic_data": [{"name": attempt.topic, "partition_data": [
                            {"index": p, "records": b.data} for p, b in request.items()]}]}
                try:
                    answer = await self._network.send(leader, PRODUCE, body, PRODUCE_MAX_VERSION)
                except Unreachable as e:
                    self._network.forget(attempt.topic)
                    for batch in request.values():
                        if e.code in RETRIABLE:
                            attempt.retry(batch, produce_error(e.code, str(e)))
                        else:
                            attempt.fail(batch, produce_error(e.code, str(e)))
                    continue
                written.append(_Written(answer, request))
        return written

    async def _complete(self, attempt: _Attempt, written: list[_Written]) -> None:
        """The answers of the attempt's requests settled; what failed retriably sent again, with
        fresh metadata, until the delivery timeout."""
        try:
            while True:
                for request in written:
                    await self._settle(attempt, request)
                if not attempt.batches:
                    return
                if time.monotonic() >= attempt.deadline:
                    attempt.fail_all(attempt.last_error or produce_error(ErrorCode.REQUEST_TIMED_OUT))
                    return
                await trio.sleep(RETRY_BACKOFF_S)
                self._network.forget(attempt.topic)
                written = await self._write(attempt)
        finally:
            attempt.fail_all(produce_error(ErrorCode.NETWORK_EXCEPTION, "the proxy stopped"))
            self._release(attempt.size)

    async def _settle(self, attempt: _Attempt, request: _Written) -> None:
        try:
            answer = await request.answer()
        except Unreachable as e:
            self._network.forget(attempt.topic)
            for batch in request.batches.values():
                attempt.retry(batch, produce_error(e.code, str(e)))
            return
        results = {p["index"]: p for t in answer["responses"] for p in t["partition_responses"]}
        for partition, batch in request.batches.items():
            result = results.get(partition)
            if result is None:
                attempt.retry(batch, produce_error(ErrorCode.UNKNOWN_SERVER_ERROR, "no answer for the partition"))
                continue
            code = result["error_code"]
            if code == 0:
                append_time = result.get("log_append_time_ms", -1)
                timestamp = append_time if append_time is not None and append_time >= 0 else batch.timestamp
                for n, i in enumerate(batch.indexes):
                    attempt.delivery.settle(i, Outcome(partition, result["base_offset"] + n, timestamp))
                continue
            detail = result.get("error_message") or (result.get("record_errors") or [{}])[0].get(
                "batch_index_error_message")
            error = produce_error(code, detail)
            if code == ErrorCode.MESSAGE_TOO_LARGE and len(batch.indexes) > 1:
                attempt.batches.extend(batch.split())
            elif code in RETRIABLE:
                if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE,
                            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.FENCED_LEADER_EPOCH):
                    self._network.forget(attempt.topic)
                attempt.retry(batch, error)
            else:
                attempt.fail(batch, error)


@dataclass
class _Written:
    """A Produce request on its way: its answer, and the batch it carries per partition."""
    pending: Any
    batches: dict[int, _Batch]

    async def answer(self) -> dict[str, Any]:
        return await self.pending()


@dataclass
class _Attempt:
    topic: str
    delivery: Delivery
    batches: list[_Batch]
    deadline: float
    size: int
    last_error: ProduceError | None = None

    def retry(self, batch: _Batch, error: ProduceError) -> None:
        self.batches.append(batch)
        self.last_error = error

    def fail(self, batch: _Batch, error: ProduceError) -> None:
        for i in batch.indexes:
            self.delivery.settle(i, Outcome(error=error))

    def fail_all(self, error: ProduceError) -> None:
        for batch in self.batches:
            self.fail(batch, error)
        self.batches = []
        self.delivery.settle_rest(error)


class Delivery:
    """The answers of records handed to the producer, as they come in."""

    def __init__(self, count: int) -> None:
        self._outcomes: list[Outcome | None] = [None] * count
        self._left = count
        self._done = trio.Event()
        if count == 0:
            self._done.set()

    def settle(self, i: int, outcome: Outcome) -> None:
        if self._outcomes[i] is None:
            self._outcomes[i] = outcome
            self._left -= 1
            if self._left == 0:
                self._done.set()

    def settle_rest(self, error: ProduceError) -> None:
        """Any record still without an answer fails with ``error``."""
        for i in _unsettled(self._outcomes):
            self.settle(i, Outcome(error=error))

    async def outcomes(self) -> list[Outcome]:
        """Each record's answer, once every one has come."""
        await self._done.wait()
        return [o for o in self._outcomes if o is not None]


def _unsettled(outcomes: Iterable[Outcome | None]) -> list[int]:
    return [i for i, o in enumerate(outcomes) if o is None]


__all__ = ["Delivery", "OutgoingRecord", "Outcome", "ProduceError", "RecordProducer"]
