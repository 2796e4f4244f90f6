"""A leader cut off from ZooKeeper while it keeps running and serving clients (a zombie leader):
its session expires, the controller moves its partitions, and it can no longer acknowledge
acks=all writes because its followers now follow the new leader.  Healed, it finds its session
gone, registers again, learns the new leader, truncates what only it had and follows.  No
acknowledged record is lost and none is written twice.

Three brokers on a real ZooKeeper; the leader reaches ZooKeeper through a TCP proxy the test cuts
(``tcp_proxy.py``); confluent-kafka's idempotent acks=all producer under load.
"""

from __future__ import annotations

import re
import time

import pytest

from cluster_tests.clients import Load, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.tcp_proxy import TcpProxy
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch
from wire.error_codes import ErrorCode

STATE = "/brokers/topics/isolated/partitions/0/state"
FAST = {"replica.lag.time.max.ms": "6000"}
PRODUCE, METADATA = 0, 3


def _follows(port: int, leader: int, epoch: int) -> bool:
    """Whether the broker at ``port`` has applied the leadership of ``leader`` at ``epoch``."""
    with RawConnection(port) as conn:
        answer = conn.request(METADATA, 9, {"topics": [{"name": "isolated"}], "allow_auto_topic_creation": False,
                                            "include_cluster_authorized_operations": False,
                                            "include_topic_authorized_operations": False})
    [partition] = answer["topics"][0]["partitions"]
    return partition["leader_id"] == leader and partition["leader_epoch"] >= epoch


@pytest.mark.cluster_timeout(300)
def test_an_isolated_leader_loses_its_partitions_and_no_acknowledged_record(cluster: Cluster) -> None:
    proxy = TcpProxy(cluster.zookeeper.port)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        # Broker 1 first, so it is the controller; broker 2, the leader to isolate, goes through the proxy.
        cluster.start_broker(1, FAST)
        view.wait_data("/controller", lambda c: c is not None and c["brokerid"] == 1)
        cluster.start_broker(2, {**FAST, "zookeeper.connect": f"127.0.0.1:{proxy.port}{cluster.chroot}"})
        cluster.start_broker(3, FAST)
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "isolated",
                                  "--replica-assignment", "2:3:1", "--config", "min.insync.replicas=2"])
        before = view.wait_data(STATE, lambda s: s is not None and sorted(s["isr"]) == [1, 2, 3])
        assert before["leader"] == 2

        load = Load(cluster.bootstrap, "isolated", **{"request.timeout.ms": 5000}).start()
        load.wait_acked(1000)
        proxy.cut()
        moved = view.wait_data(STATE, lambda s: s["leader"] not in (2, -1) and 2 not in s["isr"])
        assert moved["leader_epoch"] > before["leader_epoch"]
        assert cluster.brokers[2].is_alive(), "the isolated leader keeps running"
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "3"])
        # The others must have applied the new leadership: until then a follower's fetch from the old
        # leader can still copy what it takes (as in Kafka), and the write below would not be the
        # old leader's alone.
        deadline = time.monotonic() + 60
        while not all(_follows(cluster.brokers[n].port, moved["leader"], moved["leader_epoch"]) for n in (1, 3)):
            assert time.monotonic() < deadline, "brokers 1 and 3 never applied the new leadership"
            time.sleep(0.05)
        # Still leader in its own eyes, it takes an acks=1 write no follower will ever copy.
        with RawConnection(cluster.brokers[2].port) as conn:
            zombie = produce_partition_response(conn.request(
                PRODUCE, 9, produce_body("isolated", 0, record_batch([b"-1"], 1000), acks=1)))
        assert zombie["error_code"] == ErrorCode.NONE

        proxy.heal()
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        back = view.wait_data(STATE, lambda s: sorted(s["isr"]) == [1, 2, 3])
        assert back["leader"] == moved["leader"]
        # It truncated what only it had: the write above (and any the load's producer sent it meanwhile).
        truncated = re.search(r"isolated-0: truncated from (\d+) to (\d+)", cluster.brokers[2].stderr_text())
        assert truncated, cluster.brokers[2].stderr_text()
        assert int(truncated[1]) > zombie["base_offset"] >= int(truncated[2]), truncated[0]
        load.wait_acked(len(load.acked) + 1000)
        load.stop()

        got = read_everything(cluster.bootstrap, "isolated", 1, len(load.acked))
        values = [v for v, _, _ in got]
        assert len(values) == len(set(values)), "a value appears twice"
        assert -1 not in values, "the zombie's write was truncated"
        assert {v: (p, o) for v, p, o in got} == load.acked
    finally:
        view.close()
        # Stopped while it can still reach ZooKeeper, so its controlled shutdown does not wait.
        proxy.heal()
        if 2 in cluster.brokers:
            cluster.brokers[2].close()
        proxy.close()
