"""A new leader's own epoch starts where its log ended when it took over, before it appends anything.

Found by the fault injector (docs/faults.md): a follower held one batch of an epoch its new leader
never saw (written by the previous leader, replicated to that follower only).  The new leader's
epoch cache, learnt from batches alone, ended at an older epoch, so asked where the follower's last
epoch ends it had no answer: it sent no diverging epoch, the follower kept its extra batch and
fetched past the leader's log end for good.  It never rejoined the ISR; with min.insync.replicas=2
the partition (a __consumer_offsets one) took no more writes and its consumer group hung.

Kafka's leader writes its epoch into the cache when it takes over, so it answers: the newest epoch
it holds ends where its own begins.  Here the leader's epoch moves twice with nothing written
(1 -> 2 by controlled shutdowns), and a follower's fetch naming epoch 1 as its last (which the
leader's log never saw) must get a diverging epoch (0, end of log), as must OffsetForLeaderEpoch.

Then the other broker returns as a follower, its cache still holding epoch 1 from when it led (at
its log end, nothing written).  Told to truncate to where its log already ends, it must drop that
epoch, as Kafka's truncateTo does even when there is nothing to cut; a replica that kept it named
epoch 1 in every fetch and was told to truncate again, for good, out of the ISR (found by the
fault injector's short schedule in a fresh-clone make test: three partitions under-replicated).
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import ElectionType, TopicPartition
from confluent_kafka.admin import AdminClient

from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.raw_kafka import RawConnection
from compat_tests.storage_support import wait_for

TOPIC = "epochs"
STATE = f"/brokers/topics/{TOPIC}/partitions/0/state"
FETCH, OFFSET_FOR_LEADER_EPOCH = 1, 23
RECORDS = 5
# UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH: not leading epoch 2 yet.
NOT_YET = (3, 6, 74)


def _follower_fetch(port: int, follower: int, leader_epoch: int, offset: int, last_epoch: int) -> dict[str, Any]:
    body = {"replica_id": follower, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": TOPIC, "partitions": [{
                "partition": 0, "current_leader_epoch": leader_epoch, "fetch_offset": offset,
                "last_fetched_epoch": last_epoch, "log_start_offset": 0, "partition_max_bytes": 1 << 20}]}]}
    with RawConnection(port) as conn:
        answer = conn.request(FETCH, 12, body)
    return answer["responses"][0]["partitions"][0]


def _end_of_epoch(port: int, leader_epoch: int, asked: int) -> dict[str, Any]:
    body = {"replica_id": -1, "topics": [{"topic": TOPIC, "partitions": [
        {"partition": 0, "current_leader_epoch": leader_epoch, "leader_epoch": asked}]}]}
    with RawConnection(port) as conn:
        answer = conn.request(OFFSET_FOR_LEADER_EPOCH, 4, body)
    return answer["topics"][0]["partitions"][0]


def test_a_follower_with_an_epoch_its_new_leader_never_saw_is_told_where_to_truncate(cluster: Cluster) -> None:
    for node in (1, 2):
        cluster.start_broker(node)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        [state] = create_topic(cluster, TOPIC, replication_factor=2)
        first, second = state["leader"], next(r for r in state["isr"] if r != state["leader"])
        produce(cluster.bootstrap, TOPIC, list(range(RECORDS)), partition=0)  # epoch 0, on both

        # Epoch 1 on the other broker, epoch 2 back on the first; nothing written in either.
        cluster.brokers[first].stop()
        view.wait_data(STATE, lambda s: s["leader"] == second and s["leader_epoch"] == 1)
        cluster.start_broker(first)
        view.wait_data(STATE, lambda s: sorted(s["isr"]) == [1, 2])
        cluster.brokers[second].stop()
        led = view.wait_data(STATE, lambda s: s["leader"] == first and s["leader_epoch"] == 2)
        assert led["leader_epoch"] == 2
    finally:
        view.close()

    port = cluster.brokers[first].port
    # The follower's last batch is of epoch 1, and it holds one more batch than the leader.  The
    # leader may not have applied the state the controller wrote yet: ask until it leads epoch 2.
    def served() -> dict[str, Any] | None:
        found = _follower_fetch(port, second, 2, RECORDS + 1, 1)
        return None if found["error_code"] in NOT_YET else found

    answer = wait_for("the leader serves epoch 2", served)
    assert answer["error_code"] == 0, answer
    assert answer["diverging_epoch"] == {"epoch": 0, "end_offset": RECORDS}
    # A follower level with the leader is not told to truncate.
    level = _follower_fetch(port, second, 2, RECORDS, 0)
    assert level["error_code"] == 0 and level["diverging_epoch"] == {"epoch": -1, "end_offset": -1}
    # OffsetForLeaderEpoch: epoch 1 (never written here) ends where epoch 2 starts, as Kafka answers.
    found = _end_of_epoch(port, 2, 1)
    assert (found["error_code"], found["leader_epoch"], found["end_offset"]) == (0, 0, RECORDS)
    found = _end_of_epoch(port, 2, 2)
    assert (found["error_code"], found["leader_epoch"], found["end_offset"]) == (0, 2, RECORDS)

    cluster.start_broker(second)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        back = view.wait_data(STATE, lambda s: sorted(s["isr"]) == [1, 2], timeout=60)
        assert back["leader"] == first
    finally:
        view.close()


@pytest.mark.cluster_timeout(240)
def test_a_leader_demoted_before_writing_follows_the_new_leader_and_keeps_up(cluster: Cluster) -> None:
    """A broker leads epoch 1 with nothing written (its cache: epoch 1 at its log end), and a
    preferred election hands leadership back while it runs: as a follower it must drop epoch 1 when
    told to truncate to where it already ends, then copy what the leader takes next, so that it can
    take over with every acknowledged record when the leader stops."""
    settings = {"auto.leader.rebalance.enable": "false"}
    for node in (1, 2):
        cluster.start_broker(node, settings)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        [state] = create_topic(cluster, TOPIC, replication_factor=2)
        first, second = state["leader"], next(r for r in state["isr"] if r != state["leader"])
        produce(cluster.bootstrap, TOPIC, list(range(RECORDS)), partition=0)
        cluster.brokers[first].stop()
        view.wait_data(STATE, lambda s: s["leader"] == second and s["leader_epoch"] == 1)
        cluster.start_broker(first, settings)
        view.wait_data(STATE, lambda s: sorted(s["isr"]) == [1, 2])
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(TOPIC, 0)]).result(60)
        view.wait_data(STATE, lambda s: s["leader"] == first and s["leader_epoch"] == 2)
        produce(cluster.bootstrap, TOPIC, list(range(RECORDS, 2 * RECORDS)), partition=0)
        # The demoted broker, if it copied the new records, is still in the ISR and takes over with
        # them; one stuck truncating again and again either left the ISR (no leader now) or leads
        # without them.
        cluster.brokers[first].stop()
        view.wait_data(STATE, lambda s: s["leader"] == second)
    finally:
        view.close()
    values = sorted(v for v, _, _ in read_everything(cluster.bootstrap, TOPIC, 1, 2 * RECORDS))
    assert values == list(range(2 * RECORDS))

