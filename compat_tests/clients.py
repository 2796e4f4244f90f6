"""Thin, uniform wrappers over the two stock Python clients the compat tests drive.

`KafkaPythonClient` (kafka-python) and `ConfluentClient` (confluent-kafka, i.e.
librdkafka) expose the same small surface: produce a list of records and return
their acknowledged offsets, consume a partition by assignment from an offset,
look up offsets (earliest / latest / by timestamp).  Consumers never join a
group.  Every call is bounded by a deadline so a broker that hangs turns into a
test failure, never a stuck suite.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

CLIENT_TIMEOUT_S = 30.0
# What a broker may answer while its partitions come back online after a restart.
_STARTUP_ERRORS = {
    confluent_kafka.KafkaError.UNKNOWN_TOPIC_OR_PART,
    confluent_kafka.KafkaError.LEADER_NOT_AVAILABLE,
    confluent_kafka.KafkaError.NOT_LEADER_FOR_PARTITION,
}


def unique_topic(prefix: str) -> str:
    """A topic name no other test uses (the shared broker keeps every topic)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Rec:
    """A record to produce."""

    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: int | None = None
    partition: int = 0


@dataclass(frozen=True)
class Got:
    """A record as a consumer saw it."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp: int
    create_time: bool = field(default=True)


def sample_records(n: int, base_ts: int, *, partition: int = 0, tag: str = "r") -> list[Rec]:
    """Records covering keys, null keys, headers (including repeated and empty ones) and empty values."""
    recs = []
    for i in range(n):
        key: bytes | None = None if i % 3 == 0 else f"key-{i}".encode()
        value: bytes | None = b"" if i % 7 == 3 else f"{tag}-value-{i}-".encode() * (1 + i % 5)
        headers: tuple[tuple[str, bytes], ...] = ()
        if i % 2 == 1:
            headers = (("h1", f"hv-{i}".encode()), ("h2", b""), ("h1", b"dup"))
        recs.append(
            Rec(value=value, key=key, headers=headers, timestamp=base_ts + i * 1000, partition=partition)
        )
    return recs


def assert_records_match(
    sent: Sequence[Rec],
    got: Sequence[Got],
    offsets: Sequence[int] | None = None,
    *,
    check_timestamps: bool = True,
) -> None:
    """Every consumed record equals the one sent at the same position, field by field."""
    assert len(got) == len(sent), f"expected {len(sent)} records, consumed {len(got)}"
    for i, (s, g) in enumerate(zip(sent, got, strict=True)):
        where = f"record #{i} (offset {g.offset})"
        assert g.key == s.key, f"{where}: key {g.key!r} != sent {s.key!r}"
        assert g.value == s.value, f"{where}: value {_short(g.value)} != sent {_short(s.value)}"
        assert g.headers == s.headers, f"{where}: headers {g.headers!r} != sent {s.headers!r}"
        if offsets is not None:
            assert g.offset == offsets[i], f"{where}: offset {g.offset} != acknowledged {offsets[i]}"
        if check_timestamps and s.timestamp is not None:
            assert g.timestamp == s.timestamp, f"{where}: timestamp {g.timestamp} != sent {s.timestamp}"
            assert g.create_time, f"{where}: timestamp type is not CreateTime"


def _short(v: bytes | None) -> str:
    if v is None:
        return "None"
    return repr(v[:40]) + (f"...({len(v)} bytes)" if len(v) > 40 else "")


def create_topic(
    bootstrap: str, name: str, partitions: int = 1, config: dict[str, str] | None = None
) -> None:
    """Create a topic with confluent-kafka's AdminClient, failing the test if the broker refuses."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})],
        request_timeout=CLIENT_TIMEOUT_S,
        operation_timeout=CLIENT_TIMEOUT_S,
    )
    futures[name].result(timeout=CLIENT_TIMEOUT_S)
    wait_for_topic(bootstrap, name, partitions)


def roundtrip(config: dict[str, Any], topic: str, count: int = 50, tag: str = "c") -> list[bytes]:
    """Write ``count`` values (``<tag><n>``) to partition 0 of ``topic`` with confluent-kafka's
    producer (acks=all) and read them back from offset 0, both with the client settings
    ``config`` (a secured listener's, say); the values read, in order."""
    producer = confluent_kafka.Producer({**config, "acks": "all"})
    for n in range(count):
        producer.produce(topic, f"{tag}{n}".encode(), partition=0)
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**config, "group.id": f"g-{uuid.uuid4()}", "enable.auto.commit": False})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    try:
        while len(got) < count:
            msg = consumer.poll(10)
            assert msg is not None, f"only {len(got)} of {count} records came back"
            assert msg.error() is None, msg.error()
            got.append(msg.value())
    finally:
        consumer.close()
    return got


def wait_for_topic(bootstrap: str, name: str, partitions: int, timeout: float = CLIENT_TIMEOUT_S) -> None:
    """Metadata shows the topic with `partitions` partitions, each with a leader."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        md = admin.list_topics(topic=name, timeout=10)
        t = md.topics.get(name)
        last = t
        if (
            t is not None
            and t.error is None
            and len(t.partitions) == partitions
            and all(p.leader >= 0 for p in t.partitions.values())
        ):
            return
        time.sleep(0.1)
    raise AssertionError(f"topic {name} not visible with {partitions} partitions within {timeout}s: {last}")


# ----------------------------------------------------------------------------------------------------
# kafka-python
# ----------------------------------------------------------------------------------------------------


class KafkaPythonClient:
    name = "kafka-python"

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap

    def producer(self, **cfg: Any) -> Any:
        from kafka import KafkaProducer

        conf: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap,
            "request_timeout_ms": 15000,
            "max_block_ms": 15000,
            "delivery_timeout_ms": 30000,
            "linger_ms": 5,
            "retries": 3,
        }
        conf.update(cfg)
        return KafkaProducer(**conf)

    def produce(
        self,
        topic: str,
        records: Iterable[Rec],
        *,
        acks: Any = "all",
        compression: str | None = None,
        **cfg: Any,
    ) -> list[int]:
        """Send all records (in order, batched by the client) and return their acknowledged offsets."""
        if compression == "none":
            compression = None
        producer = self.producer(acks=acks, compression_type=compression, **cfg)
        try:
            futures = [
                producer.send(
                    topic,
                    value=r.value,
                    key=r.key,
                    headers=list(r.headers),
                    partition=r.partition,
                    timestamp_ms=r.timestamp,
                )
                for r in records
            ]
            producer.flush(timeout=CLIENT_TIMEOUT_S)
            return [f.get(timeout=CLIENT_TIMEOUT_S).offset for f in futures]
        finally:
            producer.close(timeout=10)

    def consumer(self, **cfg: Any) -> Any:
        from kafka import KafkaConsumer

        conf: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap,
            "group_id": None,
            "enable_auto_commit": False,
            "auto_offset_reset": "earliest",
            "request_timeout_ms": 20000,
            "fetch_max_wait_ms": 200,
        }
        conf.update(cfg)
        return KafkaConsumer(**conf)

    def consume(
        self,
        topic: str,
        partition: int = 0,
        start: int | str = "earliest",
        count: int = 1,
        timeout: float = CLIENT_TIMEOUT_S,
        **cfg: Any,
    ) -> list[Got]:
        """Assign one partition, seek to `start` (an offset or "earliest"), read `count` records."""
        from kafka import TopicPartition

        consumer = self.consumer(**cfg)
        tp = TopicPartition(topic, partition)
        try:
            consumer.assign([tp])
            if start == "earliest":
                consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, int(start))
            out: list[Got] = []
            deadline = time.monotonic() + timeout
            while len(out) < count and time.monotonic() < deadline:
                batch = consumer.poll(timeout_ms=500, max_records=count - len(out))
                for recs in batch.values():
                    for m in recs:
                        out.append(
                            Got(
                                m.partition,
                                m.offset,
                                m.key,
                                m.value,
                                tuple((k, v) for k, v in (m.headers or [])),
                                m.timestamp,
                                m.timestamp_type == 0,
                            )
                        )
            assert len(out) >= count, (
                f"kafka-python consumed {len(out)} of {count} records from "
                f"{topic}-{partition} at {start} within {timeout}s"
            )
            return out
        finally:
            consumer.close()

    def offsets(self, topic: str, partition: int = 0) -> tuple[int, int]:
        """(earliest, latest) via ListOffsets."""
        from kafka import TopicPartition

        consumer = self.consumer()
        tp = TopicPartition(topic, partition)
        try:
            lo = consumer.beginning_offsets([tp], timeout_ms=int(CLIENT_TIMEOUT_S * 1000))[tp]
            hi = consumer.end_offsets([tp], timeout_ms=int(CLIENT_TIMEOUT_S * 1000))[tp]
            return lo, hi
        finally:
            consumer.close()

    def offset_for_time(self, topic: str, partition: int, ts: int) -> int | None:
        from kafka import TopicPartition

        consumer = self.consumer()
        tp = TopicPartition(topic, partition)
        try:
            res = consumer.offsets_for_times({tp: ts}, timeout_ms=int(CLIENT_TIMEOUT_S * 1000))[tp]
            return None if res is None else res.offset
        finally:
            consumer.close()


# ----------------------------------------------------------------------------------------------------
# confluent-kafka (librdkafka)
# ----------------------------------------------------------------------------------------------------


class DeliveryError(AssertionError):
    def __init__(self, errors: list[Any]) -> None:
        super().__init__(f"{len(errors)} deliveries failed, first: {errors[0]}")
        self.errors = errors


class ConfluentClient:
    name = "confluent-kafka"

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap

    def producer(self, **cfg: Any) -> confluent_kafka.Producer:
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap,
            "linger.ms": 5,
            "message.timeout.ms": 30000,
            "socket.timeout.ms": 15000,
        }
        conf.update(cfg)
        return confluent_kafka.Producer(conf)

    def produce(
        self,
        topic: str,
        records: Iterable[Rec],
        *,
        acks: Any = "all",
        compression: str | None = None,
        **cfg: Any,
    ) -> list[int]:
        """Produce all records and return their acknowledged offsets (raises DeliveryError on any failure)."""
        conf: dict[str, Any] = {"acks": str(acks), "compression.type": compression or "none"}
        conf.update(cfg)
        producer = self.producer(**conf)
        records = list(records)
        results: list[Any] = [None] * len(records)

        def report(i: int) -> Any:
            def cb(err: Any, msg: Any) -> None:
                if err is not None:
                    results[i] = err
                else:  # with acks=0 there is no offset: librdkafka reports None / a negative one
                    offset = msg.offset()
                    results[i] = -1 if offset is None or offset < 0 else offset

            return cb

        for i, r in enumerate(records):
            kwargs: dict[str, Any] = {
                "value": r.value,
                "key": r.key,
                "partition": r.partition,
                "on_delivery": report(i),
            }
            if r.headers:
                kwargs["headers"] = list(r.headers)
            if r.timestamp is not None:
                kwargs["timestamp"] = r.timestamp
            producer.produce(topic, **kwargs)
            producer.poll(0)
        left = producer.flush(CLIENT_TIMEOUT_S)
        assert left == 0, (
            f"confluent producer still had {left} undelivered messages after {CLIENT_TIMEOUT_S}s"
        )
        errors = [r for r in results if not isinstance(r, int)]
        if errors:
            raise DeliveryError(errors)
        return [int(r) for r in results]

    def consumer(self, **cfg: Any) -> confluent_kafka.Consumer:
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap,
            # librdkafka insists on a group.id, but a consumer that only assigns never joins it.
            "group.id": f"compat-unused-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 200,
            "socket.timeout.ms": 15000,
        }
        conf.update(cfg)
        return confluent_kafka.Consumer(conf)

    def consume(
        self,
        topic: str,
        partition: int = 0,
        start: int | str = "earliest",
        count: int = 1,
        timeout: float = CLIENT_TIMEOUT_S,
        **cfg: Any,
    ) -> list[Got]:
        consumer = self.consumer(**cfg)
        offset = confluent_kafka.OFFSET_BEGINNING if start == "earliest" else int(start)
        errors: list[Any] = []
        try:
            consumer.assign([confluent_kafka.TopicPartition(topic, partition, offset)])
            out: list[Got] = []
            deadline = time.monotonic() + timeout
            while len(out) < count and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is None:
                    continue
                if m.error() is not None:
                    if m.error().code() != confluent_kafka.KafkaError._PARTITION_EOF:
                        errors.append(m.error())
                    continue
                ts_type, ts = m.timestamp()
                out.append(
                    Got(
                        m.partition(),
                        m.offset(),
                        m.key(),
                        m.value(),
                        tuple((k, v) for k, v in (m.headers() or [])),
                        ts,
                        ts_type == confluent_kafka.TIMESTAMP_CREATE_TIME,
                    )
                )
            assert len(out) >= count, (
                f"confluent consumed {len(out)} of {count} records from "
                f"{topic}-{partition} at {start} within {timeout}s; errors: {errors[:5]}"
            )
            return out
        finally:
            consumer.close()

    def offsets(self, topic: str, partition: int = 0) -> tuple[int, int]:
        """(earliest, latest); retriable errors (a partition still coming online after a restart,
        NOT_LEADER_OR_FOLLOWER) are retried until the client timeout, as clients themselves do."""
        consumer = self.consumer()
        deadline = time.monotonic() + CLIENT_TIMEOUT_S
        try:
            while True:
                try:
                    lo, hi = consumer.get_watermark_offsets(
                        confluent_kafka.TopicPartition(topic, partition),
                        timeout=CLIENT_TIMEOUT_S,
                        cached=False,
                    )
                    return int(lo), int(hi)
                except confluent_kafka.KafkaException as exc:
                    err = exc.args[0]
                    transient = err.retriable() or err.code() in _STARTUP_ERRORS
                    if not transient or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            consumer.close()

    def offset_for_time(self, topic: str, partition: int, ts: int) -> int | None:
        consumer = self.consumer()
        try:
            res = consumer.offsets_for_times(
                [confluent_kafka.TopicPartition(topic, partition, ts)], timeout=CLIENT_TIMEOUT_S
            )
            assert res[0].error is None, f"offsets_for_times error: {res[0].error}"
            return None if res[0].offset < 0 else int(res[0].offset)
        finally:
            consumer.close()


CLIENTS: dict[str, type[KafkaPythonClient] | type[ConfluentClient]] = {
    "kafka-python": KafkaPythonClient,
    "confluent": ConfluentClient,
}
