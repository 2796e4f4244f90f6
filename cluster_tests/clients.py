"""What the cluster tests do with real clients: create a replicated topic with Kafka's own tool,
write numbered values (once, or as a running acks=all load), and read a topic back in full.

Values are decimal numbers so a reader can tell which acknowledged write each record is; every
wait is on a delivery report, a poll or a ZooKeeper watch, never a fixed sleep.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import java_classpath, java_executable, run_tool
from pykafkad.kafka_tools import JVM_OPTIONS, SCRIPTS

STATE = "/brokers/topics/{topic}/partitions/{partition}/state"


def create_topic(cluster: Cluster, topic: str, partitions: int = 1, replication_factor: int = 3,
                 configs: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """``kafka-topics --create``, then wait until every partition's ISR is all its replicas; returns
    each partition's state znode."""
    args = ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", topic,
            "--partitions", str(partitions), "--replication-factor", str(replication_factor)]
    for key, value in (configs or {}).items():
        args += ["--config", f"{key}={value}"]
    run_tool("kafka-topics", args)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        return [view.wait_data(STATE.format(topic=topic, partition=p),
                               lambda s: s is not None and len(s["isr"]) == replication_factor)
                for p in range(partitions)]
    finally:
        view.close()


def produce(bootstrap: str, topic: str, values: list[int], partition: int | None = None, size: int = 0,
            **settings: Any) -> dict[int, tuple[int, int]]:
    """Write each value (keyed by itself; padded with spaces to ``size`` bytes, which the readers'
    ``int()`` ignores) and return where each was acknowledged: value -> (partition, offset).
    ``settings`` are librdkafka's (acks=all by default)."""
    acked: dict[int, tuple[int, int]] = {}
    errors: list[str] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2,
                         "message.timeout.ms": 60000, **settings})

    def report(err, msg) -> None:  # noqa: ANN001 - librdkafka's callback signature
        if err is not None:
            errors.append(str(err))
        else:
            acked[int(msg.value())] = (msg.partition(), msg.offset())

    for value in values:
        extra = {} if partition is None else {"partition": partition}
        producer.produce(topic, str(value).rjust(size).encode(), key=str(value).encode(), on_delivery=report,
                         **extra)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors
    return acked


class Load:
    """An idempotent acks=all producer writing numbered values on its own thread until stopped
    (``settings`` are librdkafka's, added to those)."""

    def __init__(self, bootstrap: str, topic: str, **settings: Any) -> None:
        self.topic = topic
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        self._producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                   "linger.ms": 2, "message.timeout.ms": 120000, **settings})
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _report(self, err, msg) -> None:  # noqa: ANN001 - librdkafka's callback signature
        with self._progress:
            if err is not None:
                self.errors.append(str(err))
            else:
                self.acked[int(msg.value())] = (msg.partition(), msg.offset())
            self._progress.notify_all()

    def _run(self) -> None:
        sent = 0
        while not self._stop.is_set():
            try:
                self._producer.produce(self.topic, str(sent).encode(), key=str(sent).encode(),
                                       on_delivery=self._report)
                sent += 1
            except BufferError:
                pass  # the local queue is full while a leader moves: wait for deliveries
            self._producer.poll(0.002)

    def start(self) -> Load:
        self._thread.start()
        return self

    def wait_acked(self, count: int, timeout: float = 90) -> None:
        with self._progress:
            reached = self._progress.wait_for(lambda: len(self.acked) >= count or self.errors, timeout)
        assert reached and not self.errors, \
            f"{len(self.acked)} of {count} acknowledged; errors {self.errors[:5]}"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert self._producer.flush(120) == 0
        assert not self.errors, self.errors[:5]


class JavaLoad:
    """Kafka's own Java producer under load: ``kafka-verifiable-producer`` (idempotent, acks=all by
    the Java client's defaults) writing numbered values until stopped; each acknowledgement it
    prints is recorded, as ``Load`` records librdkafka's."""

    def __init__(self, bootstrap: str, topic: str, work_dir: Path) -> None:
        self.topic = topic
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        config = work_dir / f"verifiable-producer-{topic}.properties"
        # The tool sets retries=0 unless told otherwise, which idempotence refuses.
        config.write_text("enable.idempotence=true\nacks=all\nretries=2147483647\nlinger.ms=2\n"
                          "delivery.timeout.ms=120000\n")
        self._stderr = work_dir / f"verifiable-producer-{topic}.stderr"
        self._proc = subprocess.Popen(
            [java_executable(), *JVM_OPTIONS, "-cp", java_classpath(), SCRIPTS["kafka-verifiable-producer.sh"],
             "--bootstrap-server", bootstrap, "--topic", topic, "--max-messages", "-1", "--throughput", "2000",
             "--acks", "-1", "--command-config", str(config)],
            stdout=subprocess.PIPE, stderr=self._stderr.open("w"), text=True)
        self._progress = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            with self._progress:
                if event.get("name") == "producer_send_success":
                    self.acked[int(event["value"])] = (event["partition"], event["offset"])
                elif event.get("name") == "producer_send_error":
                    self.errors.append(f"{event.get('exception')}: {event.get('message')}")
                self._progress.notify_all()
        with self._progress:
            self._progress.notify_all()  # the tool ended: a waiter stops waiting

    def wait_acked(self, count: int, timeout: float = 90) -> None:
        with self._progress:
            reached = self._progress.wait_for(
                lambda: len(self.acked) >= count or self.errors or self._proc.poll() is not None, timeout)
        assert reached and not self.errors and len(self.acked) >= count, \
            f"{len(self.acked)} of {count} acknowledged; errors {self.errors[:5]}; " \
            f"tool stderr: {self._stderr.read_text()[-2000:]}"

    def stop(self) -> None:
        """SIGTERM: the tool flushes (waits for every acknowledgement) and exits."""
        self._proc.send_signal(signal.SIGTERM)
        self._proc.wait(150)
        self._thread.join(10)
        assert not self.errors, self.errors[:5]


def read_everything(bootstrap: str, topic: str, partitions: int, count: int) -> list[tuple[int, int, int]]:
    """The first ``count`` records of ``topic`` from offset 0 of each partition, as
    (value, partition, offset), in the order they arrived."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4()}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[tuple[int, int, int]] = []
    try:
        while len(got) < count:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append((int(msg.value()), msg.partition(), msg.offset()))
    finally:
        consumer.close()
    return got


def read_committed(bootstrap: str, topic: str, partitions: int, wanted: int, timeout_s: float = 60) -> list[bytes]:
    """The values a read_committed consumer sees in ``topic``: ``wanted`` of them, or what came by
    ``timeout_s``, plus any that follow within a few more polls (a duplicate or an aborted record
    beyond the wanted count would show there)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex[:6]}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        got: list[bytes] = []
        deadline = time.monotonic() + timeout_s
        while len(got) < wanted and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        for _ in range(4):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        return got
    finally:
        consumer.close()
