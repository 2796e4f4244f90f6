"""A follower whose fetches name only its busy partitions stays in the ISR of its quiet ones.

A follower's incremental fetch names only the partitions whose position changed; the leader records
the positions of the others (their caught-up time, which keeps the follower in their ISR) only now
and then (``ReplicaManager.position_refresh_ms``, a quarter of ``replica.lag.time.max.ms`` at most),
not on every fetch, which was about a quarter of what a follower's fetch cost a leader of
thousands of partitions.  Here one partition takes records for three times ``replica.lag.time.max.ms`` while the
partitions beside it on the same leaders take none: no quiet partition's ISR may change meanwhile,
and acks=all with ``min.insync.replicas=3`` must still be taken on each of them afterwards.
"""

from __future__ import annotations

import threading
import time

import pytest
from kazoo.recipe.watchers import DataWatch

from cluster_tests.clients import STATE, Load, create_topic, produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView

LAG_MS = 3000
QUIET_PARTITIONS = 6


@pytest.mark.cluster_timeout(180)
def test_followers_stay_in_the_isr_of_quiet_partitions_while_another_is_busy(cluster: Cluster) -> None:
    cluster.start_brokers({"replica.lag.time.max.ms": str(LAG_MS)})
    create_topic(cluster, "quiet", partitions=QUIET_PARTITIONS, configs={"min.insync.replicas": "3"})
    create_topic(cluster, "busy", partitions=1)
    view = ZooKeeperView(cluster.zk_connect)
    changes: list[tuple[int, object]] = []
    lock = threading.Lock()
    try:
        for partition in range(QUIET_PARTITIONS):
            first = threading.Event()

            def seen(data: bytes | None, _stat: object, *_: object, partition: int = partition,
                     first: threading.Event = first) -> None:
                if not first.is_set():
                    first.set()  # the watch's first call is the state as it is now
                    return
                with lock:
                    changes.append((partition, data))

            DataWatch(view.zk, STATE.format(topic="quiet", partition=partition), seen)
            assert first.wait(30)
        load = Load(cluster.bootstrap, "busy").start()
        try:
            # Each broker leads two quiet partitions and follows the busy one or leads it: for three
            # times replica.lag.time.max.ms, the followers' fetches on the busy one's leader name it
            # alone, and no quiet partition's state may change.
            deadline = time.monotonic() + 3 * LAG_MS / 1000
            acked = 0
            while time.monotonic() < deadline:
                acked += 50
                load.wait_acked(acked)
                with lock:
                    assert not changes, f"quiet partitions' states changed: {changes}"
        finally:
            load.stop()
        with lock:
            assert not changes, f"quiet partitions' states changed: {changes}"
        for partition in range(QUIET_PARTITIONS):
            # min.insync.replicas=3: taken only while both followers are still in the ISR.
            acks = produce(cluster.bootstrap, "quiet", [partition], partition=partition)
            assert acks[partition][0] == partition
    finally:
        view.close()
