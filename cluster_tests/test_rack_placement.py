"""Rack-aware placement: with ``broker.rack`` set, each partition's replicas span as many racks as
they can, for new topics and for partitions added later (Kafka's rack-aware assignment).

Three brokers on a real ZooKeeper, two of them in one rack; Kafka's own kafka-topics tool; the
assignment read from ZooKeeper.
"""

from __future__ import annotations

import pytest

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

RACKS = {1: "rack-a", 2: "rack-a", 3: "rack-b"}


@pytest.mark.cluster_timeout(180)
def test_replicas_of_every_partition_span_both_racks(cluster: Cluster) -> None:
    for node_id, rack in RACKS.items():
        cluster.start_broker(node_id, {"broker.rack": rack})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        assert view.json("/brokers/ids/3")["rack"] == "rack-b"
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "racked",
                                  "--partitions", "6", "--replication-factor", "2"])
        assignment = view.json("/brokers/topics/racked")["partitions"]
        assert len(assignment) == 6
        for replicas in assignment.values():
            assert {RACKS[b] for b in replicas} == {"rack-a", "rack-b"}, assignment

        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--alter", "--topic", "racked",
                                  "--partitions", "9"])
        grown = view.wait_data("/brokers/topics/racked", lambda t: len(t["partitions"]) == 9)["partitions"]
        for replicas in grown.values():
            assert {RACKS[b] for b in replicas} == {"rack-a", "rack-b"}, grown
    finally:
        view.close()
