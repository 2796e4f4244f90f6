"""KIP-951: a Produce (v10+) or Fetch (v16+) sent to a broker that does not lead the partition
answers NOT_LEADER_OR_FOLLOWER with the current leader, its epoch and its endpoint, so clients
move without a metadata round trip; older versions carry no hint.

Two brokers on a real ZooKeeper, raw requests to see the exact fields.
"""

from __future__ import annotations

import uuid

import pytest

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch
from wire.error_codes import ErrorCode

PRODUCE = 0
FETCH = 1
METADATA = 3


def _fetch_body(topic_id: uuid.UUID) -> dict:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic_id": topic_id, "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]}


@pytest.mark.cluster_timeout(180)
def test_a_follower_names_the_current_leader_in_produce_and_fetch_answers(cluster: Cluster) -> None:
    for node_id in (1, 2):
        cluster.start_broker(node_id)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
    finally:
        view.close()
    [state] = create_topic(cluster, "hinted", replication_factor=2)
    leader, follower = state["leader"], 3 - state["leader"]
    leader_port = cluster.brokers[leader].port

    with RawConnection(cluster.brokers[follower].port) as conn:
        produced = conn.request(PRODUCE, 11, produce_body("hinted", 0, record_batch([b"x"], 1000)))
        part = produce_partition_response(produced)
        assert part["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert part["current_leader"] == {"leader_id": leader, "leader_epoch": state["leader_epoch"]}
        assert [(n["node_id"], n["host"], n["port"]) for n in produced["node_endpoints"]] == \
            [(leader, "127.0.0.1", leader_port)]

        old = produce_partition_response(conn.request(PRODUCE, 9, produce_body("hinted", 0, record_batch([b"x"], 1))))
        assert old["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert old.get("current_leader", {}).get("leader_id", -1) == -1, "v9 has no hint field"

        described = conn.request(METADATA, 12, {"topics": [{"name": "hinted", "topic_id": uuid.UUID(int=0)}],
                                                "allow_auto_topic_creation": False,
                                                "include_topic_authorized_operations": False})
        topic_id = described["topics"][0]["topic_id"]
        fetched = conn.request(FETCH, 16, _fetch_body(topic_id))
        [answer] = fetched["responses"][0]["partitions"]
        assert answer["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert answer["current_leader"] == {"leader_id": leader, "leader_epoch": state["leader_epoch"]}
        assert [(n["node_id"], n["port"]) for n in fetched["node_endpoints"]] == [(leader, leader_port)]
