"""A leader's records that no follower has are cut from its log when it returns as a follower.

Broker A leads a partition of replication factor 2; B follows.  With B paused (SIGSTOP, shorter than
its ZooKeeper session and than replica.lag.time.max.ms, so it stays registered and in the ISR),
A takes acks=1 writes, and is killed with kill -9.  B may still receive the answer to the fetch it
had sent before the pause, but none of the writes after that: those only A has.  B becomes leader
in a new epoch and takes acks=all writes at the same offsets.  When A returns, its first fetch shows that
its log diverges from B's after the old epoch; A truncates to that point and copies B's records.
Then B is killed and A leads again: the partition holds exactly B's records, and none of A's
unreplicated ones (KIP-101/KIP-279: replicas never diverge).
"""

from __future__ import annotations

import os
import signal

import pytest

from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView

STATE = "/brokers/topics/diverge/partitions/0/state"
ONLY_A = 20
# Each writer's values come from a range of its own, so a record read back names who wrote it.
BOTH = range(0, 10)  # acks=all while A leads and B follows
ONLY_A_VALUES = range(1000, 1000 + ONLY_A)  # acks=1 to A while B is paused
FROM_B = range(2000, 2007)  # acks=all to B, leader in the new epoch
AFTER_ALL = 3000  # acks=1 to A, leader again at the end
NO_LINGER = {"linger.ms": 0}


def _offsets(acked: dict[int, tuple[int, int]], values: range | list[int]) -> list[int]:
    """The offsets at which ``values`` were acknowledged, in their order; each in partition 0."""
    assert {acked[v][0] for v in values} == {0}, acked
    return [acked[v][1] for v in values]


@pytest.mark.cluster_timeout(240)
def test_a_returning_leader_truncates_what_only_it_had(cluster: Cluster) -> None:
    for node_id in (1, 2):
        cluster.start_broker(node_id, {"replica.lag.time.max.ms": "20000"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        [state] = create_topic(cluster, "diverge", replication_factor=2)
        a, b = state["leader"], next(r for r in state["isr"] if r != state["leader"])
        first = _offsets(produce(cluster.bootstrap, "diverge", list(BOTH), partition=0, **NO_LINGER), BOTH)
        assert first == list(range(10))

        follower = cluster.brokers[b].proc
        assert follower is not None
        os.kill(follower.pid, signal.SIGSTOP)
        try:
            # One request each, so at most the first can ride on the fetch B sent before the pause.
            only_a = [_offsets(produce(cluster.brokers[a].bootstrap, "diverge", [v], partition=0, acks="1",
                                       **NO_LINGER), [v])[0] for v in ONLY_A_VALUES]
            assert only_a == list(range(10, 10 + ONLY_A))
            cluster.brokers[a].kill9()
        finally:
            os.kill(follower.pid, signal.SIGCONT)

        moved = view.wait_data(STATE, lambda s: s["leader"] == b)
        assert moved["leader_epoch"] == state["leader_epoch"] + 1
        after = _offsets(produce(cluster.brokers[b].bootstrap, "diverge", list(FROM_B), partition=0, **NO_LINGER),
                         FROM_B)
        kept = after[0]  # B's log end when it took over: what it had of A's log
        assert after == list(range(kept, kept + 7))
        assert 10 <= kept < 10 + ONLY_A, "B was to miss A's later writes: nothing would diverge"

        cluster.start_broker(a, {"replica.lag.time.max.ms": "20000"})
        view.wait_data(STATE, lambda s: sorted(s["isr"]) == sorted([a, b]))
        assert "where it diverges from leader" in cluster.brokers[a].stderr_text()

        cluster.brokers[b].kill9()
        view.wait_data(STATE, lambda s: s["leader"] == a)
        expected = ([(v, 0, i) for i, v in enumerate(BOTH)]
                    + [(v, 0, 10 + i) for i, v in enumerate(ONLY_A_VALUES[:kept - 10])]
                    + [(v, 0, kept + i) for i, v in enumerate(FROM_B)])
        assert read_everything(cluster.brokers[a].bootstrap, "diverge", 1, len(expected)) == expected
        more = _offsets(produce(cluster.brokers[a].bootstrap, "diverge", [AFTER_ALL], partition=0, acks="1",
                                **NO_LINGER), [AFTER_ALL])
        assert more == [kept + 7]
    finally:
        view.close()
