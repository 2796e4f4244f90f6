"""OffsetFetch never answers a committed offset that is not replicated (issue 28, found by the fault
injector: a group's committed offset went from 956 back to 955 across a coordinator change).

The group coordinator appends an OffsetCommit to its ``__consumer_offsets`` partition, applies it to
the group, and answers the commit once the in-sync replicas have it.  OffsetFetch read the group as
applied, so while the followers could not replicate (stopped, cut off), it answered the new offset,
which the commit itself was refused for and which the next coordinator would not have.  Kafka keeps
such a commit pending and answers only offsets whose append completed.  Now a fetch of a group with
a write still replicating waits for it like the commit does, and answers the commit's error when it
fails.

Three brokers, one offsets partition; both followers of it are stopped with SIGSTOP after a first
commit (3) is replicated; a second commit (5) is refused; OffsetFetch, asked meanwhile and after,
answers 3 or an error, never 5.
"""

from __future__ import annotations

import signal

import pytest

from cluster_tests.clients import STATE, create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 8, 9, 10
GROUP = "unreplicated"
# Sessions and ISR lag longer than the test: the stopped followers stay in the ISR, so nothing moves
# the high watermark over the second commit (an ISR of the leader alone would make it committed).
SETTINGS = {"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "3",
            "min.insync.replicas": "2", "offsets.commit.timeout.ms": "2000",
            "zookeeper.session.timeout.ms": "60000", "replica.lag.time.max.ms": "60000"}


def commit(conn: RawConnection, topic: str, offset: int) -> int:
    answer = conn.request(OFFSET_COMMIT, 2, {
        "group_id": GROUP, "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -1,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                   "committed_metadata": ""}]}]})
    return answer["topics"][0]["partitions"][0]["error_code"]


def fetch(conn: RawConnection, topic: str) -> tuple[int, int]:
    """(error code, committed offset) of partition 0."""
    answer = conn.request(OFFSET_FETCH, 3, {"group_id": GROUP, "topics": [{"name": topic, "partition_indexes": [0]}]})
    if answer["error_code"] != ErrorCode.NONE:
        return answer["error_code"], -1
    part = answer["topics"][0]["partitions"][0]
    return part["error_code"], part["committed_offset"]


@pytest.mark.cluster_timeout(240)
def test_offset_fetch_never_answers_an_unreplicated_commit(cluster: Cluster) -> None:
    for node in (1, 2, 3):
        cluster.start_broker(node, SETTINGS)
    topic = "unreplicated-offsets"
    create_topic(cluster, topic)
    with RawConnection(cluster.brokers[1].port) as conn:
        found = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [GROUP]})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        state = view.wait_data(STATE.format(topic="__consumer_offsets", partition=0),
                               lambda s: s is not None and len(s["isr"]) == 3)
    finally:
        view.close()
    coordinator = state["leader"]
    assert found["coordinators"][0]["node_id"] in (coordinator, -1)
    followers = [cluster.brokers[n] for n in (1, 2, 3) if n != coordinator]
    with RawConnection(cluster.brokers[coordinator].port) as conn:
        assert commit(conn, topic, 3) == ErrorCode.NONE
        assert fetch(conn, topic) == (ErrorCode.NONE, 3)
        for broker in followers:
            assert broker.proc is not None
            broker.proc.send_signal(signal.SIGSTOP)
        try:
            assert commit(conn, topic, 5) != ErrorCode.NONE  # not replicated within offsets.commit.timeout.ms
            for _ in range(3):
                code, offset = fetch(conn, topic)
                assert offset != 5, "OffsetFetch answered a commit the in-sync replicas do not have"
                assert (code, offset) == (ErrorCode.NONE, 3) or code != ErrorCode.NONE, (code, offset)
        finally:
            for broker in followers:
                broker.proc.send_signal(signal.SIGCONT)
