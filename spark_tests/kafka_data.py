"""Test data in and out of a pykafkad broker with confluent-kafka (librdkafka), independent of
Spark: create topics, produce records with chosen keys, headers, timestamps and partitions, and
read a whole topic back by assignment.  Every call is bounded by a deadline."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TIMEOUT_S = 30.0


def unique_topic(prefix: str) -> str:
    """A topic name no other test uses (the session's broker keeps every topic)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Rec:
    """One record, as produced or as read back."""

    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: int | None = None
    partition: int = 0
    offset: int = -1
    topic: str = ""


def create_topic(bootstrap: str, topic: str, partitions: int = 1, configs: dict[str, str] | None = None) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, 1, config=configs or {})],
                                  operation_timeout=TIMEOUT_S)
    futures[topic].result(TIMEOUT_S)
    return topic


def delete_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic], operation_timeout=TIMEOUT_S)[topic].result(TIMEOUT_S)


def delete_records_before(bootstrap: str, topic: str, partition: int, offset: int) -> int:
    """DeleteRecords: move the partition's log start to ``offset``, as retention does; the new low watermark."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, partition, offset)
    [result] = admin.delete_records([tp]).values()
    return result.result(TIMEOUT_S).low_watermark


def produce(bootstrap: str, topic: str, records: Iterable[Rec]) -> list[Rec]:
    """Produce `records` in order (idempotent, acks=all); returns them with their offsets."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
    acked: list[Rec] = []
    errors: list[str] = []

    def on_ack(err: KafkaError | None, msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    sent = list(records)
    for r in sent:
        kwargs = {"timestamp": r.timestamp} if r.timestamp is not None else {}
        producer.produce(topic, value=r.value, key=r.key, headers=list(r.headers) or None,
                         partition=r.partition, on_delivery=on_ack, **kwargs)
        producer.flush(TIMEOUT_S)  # one at a time: offsets follow the list order
    assert producer.flush(TIMEOUT_S) == 0, "records still unacknowledged"
    assert not errors, errors
    for r in sent:
        acked.append(r)
    return acked


def read_all(bootstrap: str, topic: str, expect: int | None = None, timeout: float = TIMEOUT_S) -> list[Rec]:
    """Every record of `topic` (all partitions, by assignment), ordered by partition and offset."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    try:
        md = consumer.list_topics(topic, timeout=TIMEOUT_S).topics[topic]
        ends = {}
        for p in md.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=TIMEOUT_S)
            ends[p] = high
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in md.partitions])
        want = sum(ends.values()) if expect is None else expect
        out: list[Rec] = []
        deadline = time.monotonic() + timeout
        while len(out) < want and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            out.append(Rec(value=msg.value(), key=msg.key(), headers=tuple(msg.headers() or ()),
                           timestamp=msg.timestamp()[1], partition=msg.partition(), offset=msg.offset(),
                           topic=msg.topic()))
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()
