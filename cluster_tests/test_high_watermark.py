"""The high watermark across a leader's restart: it is checkpointed (``replication-offset-checkpoint``)
so a restarted leader serves what was committed at once; and while it is behind the log end the
leader had when it took over, ListOffsets answers OFFSET_NOT_AVAILABLE (KIP-207) rather than an
offset it may lose.

Three brokers on a real ZooKeeper.  The followers are SIGSTOPped (with sessions long enough to
stay registered) so the leader's high watermark cannot move while the test looks at it.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from cluster_tests.clients import produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

LIST_OFFSETS = 2
LATEST = -1
STATE = "/brokers/topics/hw/partitions/0/state"
# The followers' sessions outlive the test's pauses: paused, they stay in the ISR and registered.
FOLLOWER = {"zookeeper.session.timeout.ms": "60000", "replica.lag.time.max.ms": "600000"}
LEADER = {"replica.lag.time.max.ms": "600000", "replica.high.watermark.checkpoint.interval.ms": "100"}
COMMITTED = 10
UNCOMMITTED = 5


def _latest(port: int) -> dict:
    with RawConnection(port) as conn:
        answer = conn.request(LIST_OFFSETS, 7, {
            "replica_id": -1, "isolation_level": 0,
            "topics": [{"name": "hw", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                      "timestamp": LATEST}]}]})
    return answer["topics"][0]["partitions"][0]


def _wait_until(condition, what: str, timeout: float = 60) -> None:  # noqa: ANN001 - a predicate
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def _checkpointed(cluster: Cluster, node_id: int) -> str:
    path = cluster.brokers[node_id].log_dir / "replication-offset-checkpoint"
    return path.read_text() if path.exists() else ""


@pytest.mark.cluster_timeout(240)
def test_a_restarted_leader_serves_its_checkpointed_high_watermark_and_lags_with_offset_not_available(
        cluster: Cluster) -> None:
    view = ZooKeeperView(cluster.zk_connect)
    cluster.start_broker(1, LEADER)
    try:
        view.wait_data("/controller", lambda c: c is not None and c["brokerid"] == 1)
        cluster.start_broker(2, FOLLOWER)
        cluster.start_broker(3, FOLLOWER)
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "hw",
                                  "--replica-assignment", "1:2:3"])
        state = view.wait_data(STATE, lambda s: s is not None and sorted(s["isr"]) == [1, 2, 3])
        assert state["leader"] == 1
        leader = cluster.brokers[1]

        produce(leader.bootstrap, "hw", list(range(COMMITTED)), partition=0)
        # Kafka's file and format: version, count, then "topic partition high-watermark".
        _wait_until(lambda: f"hw 0 {COMMITTED}" in _checkpointed(cluster, 1).splitlines(),
                    "the leader checkpoints its high watermark")
        assert _checkpointed(cluster, 1).splitlines()[:1] == ["0"]

        followers = [cluster.brokers[n].proc for n in (2, 3)]
        for p in followers:
            assert p is not None
            os.kill(p.pid, signal.SIGSTOP)
        try:
            # Taken by the leader alone: above the high watermark, in its log.
            produce(leader.bootstrap, "hw", list(range(COMMITTED, COMMITTED + UNCOMMITTED)),
                    partition=0, acks="1")
            assert _latest(leader.port)["offset"] == COMMITTED

            leader.kill9()
            cluster.start_broker(1, LEADER)
            # Its followers paused, it leads again with only the checkpoint to say what was committed.
            got = read_everything(leader.bootstrap, "hw", 1, COMMITTED)
            assert [(v, o) for v, _, o in got] == [(i, i) for i in range(COMMITTED)]
            lagging = _latest(leader.port)
            assert lagging["error_code"] == ErrorCode.OFFSET_NOT_AVAILABLE, lagging
        finally:
            for p in followers:
                if p is not None:
                    os.kill(p.pid, signal.SIGCONT)

        # The followers catch up; the high watermark reaches the log end and latest is answered.
        _wait_until(lambda: _latest(leader.port)["error_code"] == ErrorCode.NONE, "latest is answered again")
        assert _latest(leader.port)["offset"] == COMMITTED + UNCOMMITTED
        got = read_everything(leader.bootstrap, "hw", 1, COMMITTED + UNCOMMITTED)
        assert [v for v, _, _ in got] == list(range(COMMITTED + UNCOMMITTED))
    finally:
        view.close()
