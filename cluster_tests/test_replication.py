"""Replication: a topic of replication factor 3 on three brokers keeps every acknowledged record
through the kill -9 of its leader, and the killed broker catches up and rejoins the ISR.

Real brokers, a real ZooKeeper, confluent-kafka's idempotent acks=all producer, Kafka's own
kafka-topics tool; waits are on ZooKeeper watches and on delivery reports, never fixed sleeps.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

# Followers that stop fetching leave the ISR quickly enough for a test.
FAST_ISR = {"replica.lag.time.max.ms": "6000"}


class Load:
    """An idempotent acks=all producer writing numbered values on its own thread until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        self._producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                   "linger.ms": 2, "message.timeout.ms": 120000})
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


def _read_everything(bootstrap: str, topic: str, partitions: int, count: int) -> list[tuple[int, int, int]]:
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


@pytest.mark.cluster_timeout(300)
def test_a_leader_killed_under_acks_all_load_loses_nothing_and_rejoins(cluster: Cluster) -> None:
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, FAST_ISR)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "replicated",
                                  "--partitions", "1", "--replication-factor", "3",
                                  "--config", "min.insync.replicas=2"])
        state = view.json("/brokers/topics/replicated/partitions/0/state")
        assert sorted(state["isr"]) == [1, 2, 3]
        leader = state["leader"]

        load = Load(cluster.bootstrap, "replicated").start()
        load.wait_acked(2000)
        cluster.brokers[leader].kill9()
        moved = view.wait_data("/brokers/topics/replicated/partitions/0/state",
                               lambda s: s["leader"] not in (leader, -1))
        assert moved["leader_epoch"] > state["leader_epoch"]
        assert leader not in moved["isr"]
        before = len(load.acked)
        load.wait_acked(before + 2000)

        cluster.start_broker(leader, FAST_ISR)
        view.wait_data("/brokers/topics/replicated/partitions/0/state", lambda s: sorted(s["isr"]) == [1, 2, 3])
        load.stop()

        acked = load.acked
        got = _read_everything(cluster.bootstrap, "replicated", 1, len(acked))
        values = [v for v, _, _ in got]
        assert len(values) == len(set(values)), "a value appears twice"
        positions = {v: (p, o) for v, p, o in got}
        lost = [v for v, where in acked.items() if positions.get(v) != where]
        assert not lost, f"{len(lost)} acknowledged records are not at their offsets, e.g. {lost[:5]}"
        described = run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--describe",
                                              "--topic", "replicated"]).stdout
        assert "Isr: " in described and "ReplicationFactor: 3" in described
    finally:
        view.close()


@pytest.mark.cluster_timeout(300)
def test_a_rolling_restart_under_load_costs_clients_only_retriable_errors(cluster: Cluster) -> None:
    """SIGTERM each broker in turn (controlled shutdown hands its leaderships over first), start it
    again and wait for the ISR to be whole, under idempotent acks=all load: the producer reports
    no error and every acknowledged record is at its offset once."""
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, FAST_ISR)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "rolling",
                                  "--partitions", "3", "--replication-factor", "3",
                                  "--config", "min.insync.replicas=2"])
        load = Load(cluster.bootstrap, "rolling").start()
        load.wait_acked(1000)
        for node_id in (1, 2, 3):
            broker = cluster.brokers[node_id]
            broker.stop()
            assert "controlled shutdown: every leadership of broker" in broker.stderr_text() or \
                "controlled shutdown: handing over 0 leadership(s)" in broker.stderr_text()
            load.wait_acked(len(load.acked) + 500)
            cluster.start_broker(node_id, FAST_ISR)
            for p in range(3):
                view.wait_data(f"/brokers/topics/rolling/partitions/{p}/state", lambda s: len(s["isr"]) == 3)
            load.wait_acked(len(load.acked) + 500)
        load.stop()
        got = _read_everything(cluster.bootstrap, "rolling", 3, len(load.acked))
        values = [v for v, _, _ in got]
        assert len(values) == len(set(values)), "a value appears twice"
        assert {v: (p, o) for v, p, o in got} == load.acked
    finally:
        view.close()
