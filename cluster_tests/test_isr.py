"""The ISR follows the followers: a stalled one leaves it and acks=all goes on; it comes back once
caught up; and with too few in-sync replicas left, acks=all is refused before anything is written.

Three brokers on a real ZooKeeper, a topic of replication factor 3 with min.insync.replicas=2,
confluent-kafka's idempotent producer and raw Produce requests for exact error codes.
"""

from __future__ import annotations

import os
import signal
import time
import uuid

import pytest

import wire
from cluster_tests.clients import Load, create_topic, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch

PRODUCE = 0
METADATA = 3
STATE = "/brokers/topics/{topic}/partitions/0/state"
MIN_ISR_2 = {"min.insync.replicas": "2"}


def _isr_seen_by(conn: RawConnection, topic: str) -> list[int]:
    answer = conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})
    return answer["topics"][0]["partitions"][0]["isr_nodes"]


@pytest.mark.cluster_timeout(240)
def test_a_stalled_follower_leaves_the_isr_and_rejoins_when_it_catches_up(cluster: Cluster) -> None:
    # A session long enough that the paused broker stays registered: only its leader can tell it lags.
    settings = {"replica.lag.time.max.ms": "3000", "zookeeper.session.timeout.ms": "30000"}
    cluster.start_brokers(settings)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        [state] = create_topic(cluster, "stalled", configs=MIN_ISR_2)
        leader = state["leader"]
        stalled = next(r for r in state["isr"] if r != leader)
        load = Load(cluster.bootstrap, "stalled").start()
        load.wait_acked(500)
        process = cluster.brokers[stalled].proc
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        try:
            shrunk = view.wait_data(STATE.format(topic="stalled"), lambda s: stalled not in s["isr"])
            assert shrunk["leader"] == leader and len(shrunk["isr"]) == 2
            # acks=all goes on with two in sync (min.insync.replicas=2).
            load.wait_acked(len(load.acked) + 500)
        finally:
            os.kill(process.pid, signal.SIGCONT)
        back = view.wait_data(STATE.format(topic="stalled"), lambda s: sorted(s["isr"]) == [1, 2, 3])
        assert back["leader"] == leader and back["leader_epoch"] == state["leader_epoch"]
        load.stop()
        got = read_everything(cluster.bootstrap, "stalled", 1, len(load.acked))
        assert {v: (p, o) for v, p, o in got} == load.acked
    finally:
        view.close()


@pytest.mark.cluster_timeout(240)
def test_with_two_of_three_down_acks_all_is_refused_and_nothing_is_written(cluster: Cluster) -> None:
    cluster.start_brokers()
    view = ZooKeeperView(cluster.zk_connect)
    try:
        [state] = create_topic(cluster, "alone", configs=MIN_ISR_2)
        leader = state["leader"]
        for other in (r for r in (1, 2, 3) if r != leader):
            cluster.brokers[other].kill9()
        view.wait_data(STATE.format(topic="alone"), lambda s: s["isr"] == [leader])
        port = cluster.brokers[leader].port
        with RawConnection(port) as conn:
            # The leader learns of the ISR change through its own watch, a moment after the test's.
            deadline = time.monotonic() + 30
            while _isr_seen_by(conn, "alone") != [leader]:
                assert time.monotonic() < deadline, "the leader never saw its ISR shrink"
                time.sleep(0.05)
            for _ in range(3):
                answer = conn.request(PRODUCE, 9, produce_body("alone", 0, record_batch([b"refused"], 1000)))
                assert produce_partition_response(answer)["error_code"] == wire.ErrorCode.NOT_ENOUGH_REPLICAS
            # acks=1 is still taken, at offset 0: the refused acks=all records were never written.
            answer = conn.request(PRODUCE, 9, produce_body("alone", 0, record_batch([b"taken"], 1000), acks=1))
            taken = produce_partition_response(answer)
            assert (taken["error_code"], taken["base_offset"]) == (0, 0)
    finally:
        view.close()
