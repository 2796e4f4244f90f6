"""``producer.id.expiration.ms``: a broker forgets an idempotent producer idle that long, as Kafka
does, so short-lived producers do not pile up in memory and in every snapshot; a producer with an
open transaction is never forgotten; a forgotten producer that comes back goes on without an error
and without a lost or doubled record."""

from __future__ import annotations

import time
from pathlib import Path

from confluent_kafka import Consumer, Producer

from compat_tests.broker_process import BrokerProcess
from compat_tests.raw_kafka import RawConnection
from compat_tests.storage_support import wait_for

DESCRIBE_PRODUCERS = 61


def _producers(port: int, topic: str) -> set[int]:
    with RawConnection(port) as conn:
        answer = conn.request(DESCRIBE_PRODUCERS, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})
    [partition] = answer["topics"][0]["partitions"]
    assert partition["error_code"] == 0, partition
    return {p["producer_id"] for p in partition["active_producers"]}


def _produce(producer: Producer, topic: str, values: range) -> None:
    failed: list[str] = []
    for v in values:
        producer.produce(topic, str(v).encode(), partition=0,
                         on_delivery=lambda err, _msg: failed.append(str(err)) if err else None)
    assert producer.flush(30) == 0 and not failed, failed


def test_idle_producers_expire_and_come_back_unharmed(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs", {"producer.id.expiration.ms": "2000",
                                               "producer.id.expiration.check.interval.ms": "100",
                                               "transaction.state.log.replication.factor": "1",
                                               "transaction.state.log.min.isr": "1"}, name="producer-expiry")
    broker.start()
    try:
        topic = "expiring"
        with RawConnection(broker.port) as conn:
            conn.create_topic(topic, partitions=1)
        # A transaction left open: its producer must outlive every idle one.
        txn = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "held-open",
                        "transaction.timeout.ms": 60000})
        txn.init_transactions(30)
        txn.begin_transaction()
        txn.produce(topic, b"in-flight", partition=0)
        assert txn.flush(30) == 0
        [held] = _producers(broker.port, topic)

        idle = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5})
        _produce(idle, topic, range(0, 100))
        [idle_id] = _producers(broker.port, topic) - {held}

        deadline = time.monotonic() + 60
        while idle_id in _producers(broker.port, topic):
            assert time.monotonic() < deadline, "the idle producer was never forgotten"
            time.sleep(0.1)
        assert _producers(broker.port, topic) == {held}
        # The pass logs once every partition is done, a moment after the removal shows.
        wait_for("the expiry logged", lambda: "expired 1 producer(s) idle for 2000 ms of expiring-0"
                 in broker.stderr_text())

        # Back after being forgotten: accepted as a new producer, every record once.
        _produce(idle, topic, range(100, 200))
        assert idle_id in _producers(broker.port, topic)
        txn.abort_transaction(30)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "expiry-check",
                             "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
        consumer.subscribe([topic])
        got: list[int] = []
        deadline = time.monotonic() + 60
        while len(got) < 200 and time.monotonic() < deadline:
            got += [int(m.value()) for m in consumer.consume(500, 1.0) if m.error() is None]
        consumer.close()
        assert got == list(range(200))
    finally:
        broker.close()
