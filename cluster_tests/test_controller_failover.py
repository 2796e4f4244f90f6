"""The controller killed -9 under replication-factor-3 load: another broker wins ``/controller`` with
a higher epoch, moves the partitions the dead one led, takes topic changes, and no acknowledged
record is lost; ``kafka-topics --describe`` tells the truth all along.

Three brokers on a real ZooKeeper, confluent-kafka's idempotent acks=all producer, Kafka's tools.
"""

from __future__ import annotations

import re

import pytest

from cluster_tests.clients import Load, create_topic, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

FAST_ISR = {"replica.lag.time.max.ms": "6000"}
PARTITIONS = 3
DESCRIBED = re.compile(r"Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S+)\s+Isr: (\S+)")


def _described(bootstrap: str, topic: str) -> dict[int, tuple[str, str]]:
    """Partition -> (leader, ISR) as ``kafka-topics --describe`` prints them."""
    out = run_tool("kafka-topics", ["--bootstrap-server", bootstrap, "--describe", "--topic", topic]).stdout
    return {int(p): (leader, isr) for p, leader, _, isr in DESCRIBED.findall(out)}


def _states(view: ZooKeeperView, topic: str) -> dict[int, tuple[str, str]]:
    out = {}
    for p in range(PARTITIONS):
        s = view.json(f"/brokers/topics/{topic}/partitions/{p}/state")
        out[p] = ("none" if s["leader"] == -1 else str(s["leader"]), ",".join(str(r) for r in s["isr"]))
    return out


@pytest.mark.cluster_timeout(300)
def test_the_controller_killed_under_load_is_replaced_and_nothing_acknowledged_is_lost(cluster: Cluster) -> None:
    cluster.start_brokers(FAST_ISR)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        create_topic(cluster, "steady", partitions=PARTITIONS, configs={"min.insync.replicas": "2"})
        controller = view.json("/controller")["brokerid"]
        epoch = view.json("/controller_epoch")
        assert _described(cluster.bootstrap, "steady") == _states(view, "steady")

        load = Load(cluster.bootstrap, "steady").start()
        load.wait_acked(1500)
        cluster.brokers[controller].kill9()
        survivors = ",".join(b.bootstrap for n, b in cluster.brokers.items() if n != controller)
        successor = view.wait_data("/controller", lambda c: c is not None and c["brokerid"] != controller)
        # The winner bumps the epoch right after it takes the node.
        view.wait_data("/controller_epoch", lambda e: e > epoch)
        for p in range(PARTITIONS):
            view.wait_data(f"/brokers/topics/steady/partitions/{p}/state",
                           lambda s: s["leader"] not in (controller, -1) and controller not in s["isr"])
        load.wait_acked(len(load.acked) + 1500)
        # What the tool prints is what ZooKeeper holds, the dead broker out of every ISR.
        assert _described(survivors, "steady") == _states(view, "steady")

        # The new controller takes topic changes.
        [created] = create_topic(cluster, "after-failover", replication_factor=2)
        assert created["leader"] != controller

        cluster.start_broker(controller, FAST_ISR)
        for p in range(PARTITIONS):
            view.wait_data(f"/brokers/topics/steady/partitions/{p}/state", lambda s: len(s["isr"]) == 3)
        assert view.json("/controller")["brokerid"] == successor["brokerid"]
        load.wait_acked(len(load.acked) + 500)
        load.stop()
        assert _described(cluster.bootstrap, "steady") == _states(view, "steady")

        got = read_everything(cluster.bootstrap, "steady", PARTITIONS, len(load.acked))
        values = [v for v, _, _ in got]
        assert len(values) == len(set(values)), "a value appears twice"
        assert {v: (p, o) for v, p, o in got} == load.acked
    finally:
        view.close()
