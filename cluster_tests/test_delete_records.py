"""DeleteRecords on three brokers is answered once every replica on a live broker has moved its log
start that far (Kafka's delayed DeleteRecords and low watermark), so a failover right after it cannot
bring the deleted records back; a follower that cannot fetch holds the answer until the request's
timeout, REQUEST_TIMED_OUT.

Three brokers on a real ZooKeeper, a replication factor 3 topic written by confluent-kafka, raw
DeleteRecords and ListOffsets requests for exact answers.
"""

from __future__ import annotations

import os
import signal

import pytest

from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.groups_timeouts_support import poll_until
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

LIST_OFFSETS, DELETE_RECORDS = 2, 21
STATE = "/brokers/topics/{topic}/partitions/0/state"
EARLIEST = -2


def _delete_records(port: int, topic: str, offset: int, timeout_ms: int) -> tuple[int, int]:
    with RawConnection(port) as conn:
        answer = conn.request(DELETE_RECORDS, 2, {"topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "offset": offset}]}], "timeout_ms": timeout_ms})
    [partition] = answer["topics"][0]["partitions"]
    return partition["low_watermark"], partition["error_code"]


def _earliest(port: int, topic: str) -> tuple[int, int]:
    with RawConnection(port) as conn:
        answer = conn.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                            "timestamp": EARLIEST}]}]})
    [partition] = answer["topics"][0]["partitions"]
    return partition["error_code"], partition["offset"]


@pytest.mark.cluster_timeout(240)
def test_delete_records_waits_for_every_live_replica_and_survives_the_leader_s_kill(cluster: Cluster) -> None:
    # A session long enough that the paused follower stays registered (alive) throughout.
    cluster.start_brokers({"zookeeper.session.timeout.ms": "6000"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        [state] = create_topic(cluster, "trimmed", configs={"min.insync.replicas": "2"})
        leader = state["leader"]
        paused, other = (r for r in state["isr"] if r != leader)
        produce(cluster.bootstrap, "trimmed", list(range(100)))
        leader_port = cluster.brokers[leader].port

        process = cluster.brokers[paused].proc
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        try:
            # One live follower cannot move its log start: the answer waits for the timeout, and the
            # low watermark is still that follower's.
            assert _delete_records(leader_port, "trimmed", 50, 1000) == (0, ErrorCode.REQUEST_TIMED_OUT)
        finally:
            os.kill(process.pid, signal.SIGCONT)
        # Asked again once it fetches: done when every replica starts at 50 (-1: the high watermark).
        assert _delete_records(leader_port, "trimmed", 50, 30_000) == (50, ErrorCode.NONE)
        assert _delete_records(leader_port, "trimmed", -1, 30_000) == (100, ErrorCode.NONE)

        # Every replica dropped the records before the answer: the next leader starts where it said.
        cluster.brokers[leader].kill9()
        moved = view.wait_data(STATE.format(topic="trimmed"), lambda s: s["leader"] not in (leader, -1))
        assert moved["leader"] in (paused, other)
        new_port = cluster.brokers[moved["leader"]].port
        # The new leader answers once it has applied its leadership (each broker does on its own).
        answered = poll_until(lambda: (a := _earliest(new_port, "trimmed"))[0] != ErrorCode.NOT_LEADER_OR_FOLLOWER
                              and a, 30, "the new leader never answered ListOffsets as leader")
        assert answered == (ErrorCode.NONE, 100)
        produce(cluster.bootstrap, "trimmed", [100])
        assert [(value, offset) for value, _, offset in read_everything(cluster.bootstrap, "trimmed", 1, 1)] == [
            (100, 100)]
    finally:
        view.close()
