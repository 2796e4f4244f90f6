"""Replication: a topic of replication factor 3 on three brokers keeps every acknowledged record
through the kill -9 of its leader, and the killed broker catches up and rejoins the ISR.

Real brokers, a real ZooKeeper, confluent-kafka's idempotent acks=all producer, Kafka's own
kafka-topics tool; waits are on ZooKeeper watches and on delivery reports, never fixed sleeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_tests.clients import JavaLoad, Load, create_topic, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

# Followers that stop fetching leave the ISR quickly enough for a test.
FAST_ISR = {"replica.lag.time.max.ms": "6000"}


@pytest.mark.cluster_timeout(300)
def test_a_leader_killed_under_acks_all_load_loses_nothing_and_rejoins(cluster: Cluster) -> None:
    cluster.start_brokers(FAST_ISR)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        [state] = create_topic(cluster, "replicated", configs={"min.insync.replicas": "2"})
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
        got = read_everything(cluster.bootstrap, "replicated", 1, len(acked))
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
    cluster.start_brokers(FAST_ISR)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        create_topic(cluster, "rolling", partitions=3, configs={"min.insync.replicas": "2"})
        load = Load(cluster.bootstrap, "rolling").start()
        load.wait_acked(1000)
        for node_id in (1, 2, 3):
            broker = cluster.brokers[node_id]
            broker.stop()
            assert "controlled shutdown: every leadership of broker" in broker.stderr_text() or \
                "controlled shutdown: handing over 0 leadership(s)" in broker.stderr_text()
            # A clean stop ends its own session: no expiry is reported.
            assert "ZooKeeper session expired" not in broker.stderr_text()
            load.wait_acked(len(load.acked) + 500)
            cluster.start_broker(node_id, FAST_ISR)
            for p in range(3):
                view.wait_data(f"/brokers/topics/rolling/partitions/{p}/state", lambda s: len(s["isr"]) == 3)
            load.wait_acked(len(load.acked) + 500)
        load.stop()
        got = read_everything(cluster.bootstrap, "rolling", 3, len(load.acked))
        values = [v for v, _, _ in got]
        assert len(values) == len(set(values)), "a value appears twice"
        assert {v: (p, o) for v, p, o in got} == load.acked
    finally:
        view.close()


@pytest.mark.cluster_timeout(420)
def test_repeated_leader_kills_lose_nothing_for_librdkafka_and_the_java_producer(cluster: Cluster,
                                                                                 tmp_path: Path) -> None:
    """Three rounds of kill -9 of a partition's leader and its restart, under two idempotent acks=all
    loads at once (confluent-kafka on one topic, Kafka's Java producer on another): afterwards each
    acknowledged record is at its offset once, and the ISRs are whole.  Two replica fetchers per
    leader (``num.replica.fetchers``) share the followed partitions."""
    cluster.start_brokers({**FAST_ISR, "num.replica.fetchers": "2"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        for topic in ("rdkafka-load", "java-load"):
            create_topic(cluster, topic, configs={"min.insync.replicas": "2"})
        loads = {"rdkafka-load": Load(cluster.bootstrap, "rdkafka-load").start(),
                 "java-load": JavaLoad(cluster.bootstrap, "java-load", tmp_path)}
        for load in loads.values():
            load.wait_acked(500)
        for topic in ("rdkafka-load", "java-load", "rdkafka-load"):
            path = f"/brokers/topics/{topic}/partitions/0/state"
            leader = view.json(path)["leader"]
            cluster.brokers[leader].kill9()
            view.wait_data(path, lambda s, dead=leader: s["leader"] not in (dead, -1))
            for load in loads.values():
                load.wait_acked(len(load.acked) + 500)
            cluster.start_broker(leader)
            for t in loads:
                view.wait_data(f"/brokers/topics/{t}/partitions/0/state", lambda s: len(s["isr"]) == 3)
        for load in loads.values():
            load.stop()
        for topic, load in loads.items():
            got = read_everything(cluster.bootstrap, topic, 1, len(load.acked))
            values = [v for v, _, _ in got]
            assert len(values) == len(set(values)), f"{topic}: a value appears twice"
            assert {v: (p, o) for v, p, o in got} == load.acked, topic
    finally:
        view.close()
