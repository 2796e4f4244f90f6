"""Leader elections beyond failover: the preferred leader comes back by ``kafka-leader-election.sh``
(ElectLeaders) or by the controller's ``auto.leader.rebalance.enable`` check, and an offline
partition is led from an out-of-sync replica only when ``unclean.leader.election.enable`` says so
(set before or after the partition went offline) or an operator asks for an UNCLEAN election.

Three brokers on a real ZooKeeper, Kafka's own tools, partition states read from ZooKeeper.
"""

from __future__ import annotations

import pytest

from cluster_tests.clients import produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

STATE = "/brokers/topics/{topic}/partitions/{partition}/state"
NO_AUTO_REBALANCE = {"auto.leader.rebalance.enable": "false"}


def _start(cluster: Cluster, overrides: dict[str, str]) -> ZooKeeperView:
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, overrides)
    view = ZooKeeperView(cluster.zk_connect)
    view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
    return view


def _create(cluster: Cluster, view: ZooKeeperView, topic: str, assignment: str, *configs: str) -> None:
    args = ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", topic, "--replica-assignment", assignment]
    for c in configs:
        args += ["--config", c]
    run_tool("kafka-topics", args)
    for p, replicas in enumerate(assignment.split(",")):
        expected = sorted(int(r) for r in replicas.split(":"))
        view.wait_data(STATE.format(topic=topic, partition=p),
                       lambda s, e=expected: s is not None and sorted(s["isr"]) == e)


def _leader_moves_off_and_back(cluster: Cluster, view: ZooKeeperView, overrides: dict[str, str]) -> dict:
    """Kill broker 1 (preferred leader of pref-0), restart it and wait until it is in sync again."""
    path = STATE.format(topic="pref", partition=0)
    before = view.json(path)
    assert before["leader"] == 1
    cluster.brokers[1].kill9()
    view.wait_data(path, lambda s: s["leader"] not in (1, -1))
    cluster.start_broker(1, overrides)
    return view.wait_data(path, lambda s: sorted(s["isr"]) == [1, 2, 3])


def _election(cluster: Cluster, *args: str, check: bool = True) -> str:
    done = run_tool("kafka-leader-election", ["--bootstrap-server", cluster.bootstrap, *args], check=check)
    return done.stdout + done.stderr


@pytest.mark.cluster_timeout(240)
def test_kafka_leader_election_hands_leadership_back_to_the_preferred_replica(cluster: Cluster) -> None:
    view = _start(cluster, NO_AUTO_REBALANCE)
    try:
        _create(cluster, view, "pref", "1:2:3,2:3:1")
        back = _leader_moves_off_and_back(cluster, view, NO_AUTO_REBALANCE)
        assert back["leader"] != 1, "auto.leader.rebalance.enable=false: the leader stays where it moved"

        out = _election(cluster, "--election-type", "PREFERRED", "--all-topic-partitions")
        assert "Successfully completed leader election (PREFERRED) for partitions pref-0" in out, out
        elected = view.json(STATE.format(topic="pref", partition=0))
        assert elected["leader"] == 1 and elected["leader_epoch"] == back["leader_epoch"] + 1
        assert sorted(elected["isr"]) == [1, 2, 3]
        described = run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--describe",
                                              "--topic", "pref"]).stdout
        assert "Partition: 0\tLeader: 1\t" in described, described

        out = _election(cluster, "--election-type", "PREFERRED", "--topic", "pref", "--partition", "0")
        assert "Valid replica already elected for partitions pref-0" in out, out

        # The preferred replica of pref-1 is down: Kafka's PREFERRED_LEADER_NOT_AVAILABLE, and the tool fails.
        cluster.brokers[2].kill9()
        view.wait_data(STATE.format(topic="pref", partition=1), lambda s: s["leader"] == 3)
        out = _election(cluster, "--election-type", "PREFERRED", "--topic", "pref", "--partition", "1", check=False)
        assert "pref-1" in out and "PreferredLeaderNotAvailableException" in out, out
        assert view.json(STATE.format(topic="pref", partition=1))["leader"] == 3
    finally:
        view.close()


@pytest.mark.cluster_timeout(240)
def test_auto_leader_rebalance_returns_leadership_to_the_preferred_replica(cluster: Cluster) -> None:
    fast = {"leader.imbalance.check.interval.seconds": "1"}
    view = _start(cluster, fast)
    try:
        _create(cluster, view, "pref", "1:2:3")
        _leader_moves_off_and_back(cluster, view, fast)
        view.wait_data(STATE.format(topic="pref", partition=0), lambda s: s["leader"] == 1)
    finally:
        view.close()


@pytest.mark.cluster_timeout(240)
def test_an_offline_partition_is_led_unclean_only_when_allowed(cluster: Cluster) -> None:
    view = _start(cluster, {})
    try:
        _create(cluster, view, "lenient", "1:2", "unclean.leader.election.enable=true")
        _create(cluster, view, "strict", "1:2")
        _create(cluster, view, "later", "1:2")
        for topic in ("lenient", "strict", "later"):
            produce(cluster.bootstrap, topic, list(range(5)))

        # Broker 2 leaves the ISR; then broker 1, the last in-sync replica, dies too.
        cluster.brokers[2].kill9()
        for topic in ("lenient", "strict", "later"):
            view.wait_data(STATE.format(topic=topic, partition=0), lambda s: s["isr"] == [1])
        cluster.brokers[1].kill9()
        for topic in ("lenient", "strict", "later"):
            view.wait_data(STATE.format(topic=topic, partition=0), lambda s: s["leader"] == -1)

        # Broker 2 returns: out of sync, it may lead only the topic that allows it.
        cluster.start_broker(2)
        lenient = view.wait_data(STATE.format(topic="lenient", partition=0), lambda s: s["leader"] == 2)
        assert lenient["isr"] == [2]
        assert view.json(STATE.format(topic="strict", partition=0))["leader"] == -1
        assert view.json(STATE.format(topic="later", partition=0))["leader"] == -1

        # Allowing it later elects at once, as Kafka's controller does on the config change.
        run_tool("kafka-configs", ["--bootstrap-server", cluster.bootstrap, "--alter", "--entity-type", "topics",
                                   "--entity-name", "later", "--add-config", "unclean.leader.election.enable=true"])
        later = view.wait_data(STATE.format(topic="later", partition=0), lambda s: s["leader"] == 2)
        assert later["isr"] == [2]

        out = _election(cluster, "--election-type", "UNCLEAN", "--topic", "strict", "--partition", "0")
        assert "Successfully completed leader election (UNCLEAN) for partitions strict-0" in out, out
        strict = view.json(STATE.format(topic="strict", partition=0))
        assert strict["leader"] == 2 and strict["isr"] == [2]
        # Both take writes again, from the records broker 2 had.
        for topic in ("lenient", "strict", "later"):
            acked = produce(cluster.bootstrap, topic, [100])
            assert acked[100] == (0, 5)
    finally:
        view.close()
