"""Deleting a topic in a cluster removes its partitions from every broker that held them, so a
topic created again under the name starts empty on each replica.

Three brokers on a real ZooKeeper; Kafka's kafka-topics tool through one broker; confluent-kafka.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool


@pytest.mark.cluster_timeout(180)
def test_a_deleted_topic_leaves_every_broker_and_comes_back_empty(cluster: Cluster) -> None:
    cluster.start_brokers()
    view = ZooKeeperView(cluster.zk_connect)
    try:
        create_topic(cluster, "reborn", partitions=3)
        produce(cluster.bootstrap, "reborn", list(range(30)))
        # Deleted through broker 1 only: brokers 2 and 3 learn of it from ZooKeeper.
        run_tool("kafka-topics", ["--bootstrap-server", cluster.brokers[1].bootstrap, "--delete",
                                  "--topic", "reborn"])
        view.wait_children("/brokers/topics", lambda topics: "reborn" not in topics)
        for node_id in (2, 3):
            broker = cluster.brokers[node_id]
            _wait_gone(broker.log_dir, "reborn")

        create_topic(cluster, "reborn", partitions=3)
        acked = produce(cluster.bootstrap, "reborn", [1000, 1001, 1002])
        # Offsets start again from 0: no replica kept the old topic's 30 records.
        assert all(o < 3 for _, o in acked.values()), acked
        got = read_everything(cluster.bootstrap, "reborn", 3, 3)
        assert sorted(v for v, _, _ in got) == [1000, 1001, 1002]
        assert {v: (p, o) for v, p, o in got} == acked
    finally:
        view.close()


def _wait_gone(log_dir: Path, topic: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while any(p.name.startswith(f"{topic}-") for p in log_dir.iterdir()):
        assert time.monotonic() < deadline, f"{topic} partitions still in {log_dir}: {sorted(log_dir.iterdir())}"
        time.sleep(0.05)
