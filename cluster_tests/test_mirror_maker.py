"""MirrorMaker 2 between two pykafkad clusters of two brokers each (each on its own ZooKeeper
chroot), every topic replicated twice: records, topic configs, a partition added later, and a
consumer group's offsets translated through checkpoints (``compat_tests/mirror_maker.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from cluster_tests.zookeeper_server import ZooKeeperServer
from compat_tests.mirror_maker import mirror_and_move_a_group

SETTINGS = {"offsets.topic.replication.factor": "2", "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false"}


def _start(cluster: Cluster) -> None:
    for node_id in (1, 2):
        cluster.start_broker(node_id, SETTINGS)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
    finally:
        view.close()


@pytest.mark.cluster_timeout(300)
def test_mirror_maker_2_between_two_clusters(cluster: Cluster, zookeeper: ZooKeeperServer, tmp_path: Path) -> None:
    target = Cluster(zookeeper, tmp_path / "target")
    try:
        _start(cluster)
        _start(target)
        mirror_and_move_a_group(cluster.bootstrap, target.bootstrap, tmp_path, replication_factor=2)
    finally:
        target.close()
