"""``connections.max.idle.ms``: the broker closes a connection on which nothing moved for that long,
as Kafka's Selector expires idle channels; one in use stays open, and a real client reconnects
after the close and goes on working."""

from __future__ import annotations

import socket
import struct
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.raw_kafka import RawConnection
from compat_tests.test_metrics import MetricsBroker, value

IDLE_MS = 3000
# Generous: only that the close comes is asserted, never when.
CLOSE_DEADLINE_S = 60.0


class IdleBroker(MetricsBroker):
    """A broker with a short connections.max.idle.ms, and /metrics to see its connections."""

    def __init__(self, work: Path) -> None:
        self.http_port = free_port()
        # No initial rebalance delay: the reconnecting consumer's new group is not held back 3 s.
        self.broker = BrokerProcess(work / "logs", {"connections.max.idle.ms": str(IDLE_MS),
                                                    "metrics.listener": f"http://127.0.0.1:{self.http_port}",
                                                    "group.initial.rebalance.delay.ms": "0"},
                                    name="idle")


@pytest.fixture(scope="module")
def idle_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetricsBroker]:
    server = IdleBroker(tmp_path_factory.mktemp("idle"))
    server.broker.start()
    yield server
    server.broker.close()


def _open_connections(server: MetricsBroker) -> float:
    return value(server.scrape(), "kafka_server_socketservermetrics_connection_count", listener="PLAINTEXT")


def test_silent_connection_is_closed_and_a_busy_one_is_not(idle_broker: MetricsBroker) -> None:
    port = idle_broker.broker.port
    closed_before = value(idle_broker.scrape(), "kafka_server_socketservermetrics_connection_close_total",
                          listener="PLAINTEXT")
    with RawConnection(port) as silent, RawConnection(port) as busy:
        assert silent.api_versions()[0] == 0
        assert busy.api_versions()[0] == 0
        # The busy connection asks something every 0.3 s, far more often than the limit, for as
        # long as the silent one stays open.
        deadline = time.monotonic() + CLOSE_DEADLINE_S
        while not silent.wait_closed(timeout=0.3):
            assert time.monotonic() < deadline, (
                f"a connection silent for {CLOSE_DEADLINE_S}s was not closed "
                f"(connections.max.idle.ms={IDLE_MS})\n{idle_broker.broker.stderr_tail()}")
            assert busy.api_versions()[0] == 0, "the busy connection was closed or refused"
        # The silent one closed after IDLE_MS at least; the busy one, as busy all along, answers still.
        assert busy.api_versions()[0] == 0
    assert value(idle_broker.scrape(), "kafka_server_socketservermetrics_connection_close_total",
                 listener="PLAINTEXT") >= closed_before + 1


def test_connection_silent_inside_a_frame_is_closed(idle_broker: MetricsBroker) -> None:
    """A client that stops part way through a request (its size and a few bytes of it sent) is as
    idle as a silent one: closed, and not before connections.max.idle.ms."""
    with socket.create_connection(("127.0.0.1", idle_broker.broker.port), timeout=CLOSE_DEADLINE_S) as sock:
        sent = time.monotonic()
        sock.sendall(struct.pack(">i", 100) + b"\x00\x12\x00")
        try:
            data = sock.recv(1)
        except ConnectionResetError:
            data = b""
        waited = time.monotonic() - sent
    assert data == b"", f"the broker answered a third of a frame with {data!r}"
    assert waited >= IDLE_MS / 1000 * 0.9, f"closed after {waited:.2f}s, before connections.max.idle.ms={IDLE_MS}"


def test_client_reconnects_after_idle_close(idle_broker: MetricsBroker) -> None:
    topic = f"idle-{uuid.uuid4().hex[:8]}"
    bootstrap = idle_broker.broker.bootstrap
    producer = Producer({"bootstrap.servers": bootstrap, "topic.metadata.refresh.interval.ms": 600000})
    errors: list[str] = []

    def delivered(err: object, msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    producer.produce(topic, b"before", on_delivery=delivered)
    assert producer.flush(30) == 0 and not errors, errors
    # The producer holds its connections open and sends nothing: the broker closes every one.
    deadline = time.monotonic() + CLOSE_DEADLINE_S
    while _open_connections(idle_broker) > 0:
        assert time.monotonic() < deadline, "an idle producer's connections were never closed"
        producer.poll(0.2)
    producer.produce(topic, b"after", on_delivery=delivered)
    assert producer.flush(30) == 0 and not errors, errors

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}",
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < 2 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        assert got == [b"before", b"after"]
    finally:
        consumer.close()
