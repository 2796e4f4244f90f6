"""A leader's records that no follower has are cut from its log when it returns as a follower.

Broker A leads a partition of replication factor 2; B follows.  With B paused (SIGSTOP, shorter than
its ZooKeeper session and than replica.lag.time.max.ms, so it stays registered and in the ISR),
A takes acks=1 writes, and is killed with kill -9.  B may still receive the answer to the fetch it
had sent before the pause, but none of the writes after that: those only A has.  B becomes leader
in a new epoch and takes acks=all writes at the same offsets.  When A returns, its first fetch shows that
its log diverges from B's after the old epoch; A truncates to that point and copies B's records.
Then B is killed and A leads again: the partition holds exactly B's records, and none of A's
unreplicated ones (KIP-101/KIP-279: replicas never diverge).
"""

from __future__ import annotations

import os
import signal
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

STATE = "/brokers/topics/diverge/partitions/0/state"
ONLY_A = 20


def _produce(bootstrap: str, values: list[str], acks: str) -> list[int]:
    offsets: dict[str, int] = {}
    errors: list[str] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 0,
                         "message.timeout.ms": 60000})

    def report(err, msg) -> None:  # noqa: ANN001 - librdkafka's callback signature
        if err is not None:
            errors.append(str(err))
        else:
            offsets[msg.value().decode()] = msg.offset()

    for value in values:
        producer.produce("diverge", value.encode(), partition=0, on_delivery=report)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors
    return [offsets[v] for v in values]


def _read_all(bootstrap: str, count: int) -> list[tuple[int, str]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4()}",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("diverge", 0, 0)])
    got: list[tuple[int, str]] = []
    try:
        while len(got) < count:
            msg = consumer.poll(1.0)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append((msg.offset(), msg.value().decode()))
    finally:
        consumer.close()
    return got


@pytest.mark.cluster_timeout(240)
def test_a_returning_leader_truncates_what_only_it_had(cluster: Cluster) -> None:
    for node_id in (1, 2):
        cluster.start_broker(node_id, {"replica.lag.time.max.ms": "20000"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "diverge",
                                  "--partitions", "1", "--replication-factor", "2"])
        state = view.json(STATE)
        a, b = state["leader"], next(r for r in state["isr"] if r != state["leader"])
        first = _produce(cluster.bootstrap, [f"both-{i}" for i in range(10)], acks="all")
        assert first == list(range(10))

        follower = cluster.brokers[b].proc
        assert follower is not None
        os.kill(follower.pid, signal.SIGSTOP)
        try:
            # One request each, so at most the first can ride on the fetch B sent before the pause.
            only_a = [_produce(cluster.brokers[a].bootstrap, [f"only-a-{i}"], acks="1")[0] for i in range(ONLY_A)]
            assert only_a == list(range(10, 10 + ONLY_A))
            cluster.brokers[a].kill9()
        finally:
            os.kill(follower.pid, signal.SIGCONT)

        moved = view.wait_data(STATE, lambda s: s["leader"] == b)
        assert moved["leader_epoch"] == state["leader_epoch"] + 1
        after = _produce(cluster.brokers[b].bootstrap, [f"from-b-{i}" for i in range(7)], acks="all")
        kept = after[0]  # B's log end when it took over: what it had of A's log
        assert after == list(range(kept, kept + 7))
        assert 10 <= kept < 10 + ONLY_A, "B was to miss A's later writes: nothing would diverge"

        cluster.start_broker(a, {"replica.lag.time.max.ms": "20000"})
        view.wait_data(STATE, lambda s: sorted(s["isr"]) == sorted([a, b]))
        assert "where it diverges from leader" in cluster.brokers[a].stderr_text()

        cluster.brokers[b].kill9()
        view.wait_data(STATE, lambda s: s["leader"] == a)
        expected = ([(i, f"both-{i}") for i in range(10)] + [(10 + i, f"only-a-{i}") for i in range(kept - 10)]
                    + [(kept + i, f"from-b-{i}") for i in range(7)])
        assert _read_all(cluster.brokers[a].bootstrap, len(expected)) == expected
        more = _produce(cluster.brokers[a].bootstrap, ["after-all"], acks="1")
        assert more == [kept + 7]
    finally:
        view.close()
