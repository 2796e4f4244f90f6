"""The same topic created on two brokers at once (as when consumers reach different brokers first
and each auto-creates ``__consumer_offsets``): one creation wins, the other is told
TOPIC_ALREADY_EXISTS, and every partition is served on both brokers. The losing broker's own new
logs, registered while its write was on its way, must never be the winner's replicas."""

from __future__ import annotations

import threading
import uuid

import pytest

from cluster_tests.clients import produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.raw_kafka import RawConnection

CREATE_TOPICS = 19
PARTITIONS = 50


def _create(port: int, name: str, out: dict[int, int]) -> None:
    with RawConnection(port) as conn:
        answer = conn.request(CREATE_TOPICS, 7, {"topics": [{
            "name": name, "num_partitions": PARTITIONS, "replication_factor": 2, "assignments": [],
            "configs": []}], "timeout_ms": 30000, "validate_only": False})
    out[port] = answer["topics"][0]["error_code"]


@pytest.mark.cluster_timeout(240)
def test_a_topic_created_on_two_brokers_at_once_is_served_whole(cluster: Cluster) -> None:
    for node_id in (1, 2):
        cluster.start_broker(node_id)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        ports = [cluster.brokers[n].port for n in (1, 2)]
        names = [f"race-{uuid.uuid4().hex[:6]}-{n}" for n in range(6)]
        for name in names:
            outcomes: dict[int, int] = {}
            threads = [threading.Thread(target=_create, args=(port, name, outcomes)) for port in ports]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert sorted(outcomes.values()) in ([0, 36], [0, 0]), outcomes  # 36: TOPIC_ALREADY_EXISTS
        for name in names:
            # acks=all to every partition: each leader and its follower serve a log that is open.
            for partition in range(PARTITIONS):
                acked = produce(cluster.bootstrap, name, [partition], partition=partition,
                                **{"message.timeout.ms": 30000})
                assert acked[partition][0] == partition, (name, acked)
        for node_id in (1, 2):
            assert "is closed" not in cluster.brokers[node_id].stderr_text(), node_id
    finally:
        view.close()
