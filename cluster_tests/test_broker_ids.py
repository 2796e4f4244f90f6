"""Broker ids, the trap Kafka's operations guide warns of: a broker restarted with its own
``broker.id`` gets its replicas back, while a broker with another id takes over nobody's
partitions: on a fresh data directory it registers and holds nothing, and on another broker's
data directory it refuses to start (``meta.properties``, with Kafka's message).

ZooKeeper and three brokers on 127.0.0.1; waits on ZooKeeper watches.
"""

from __future__ import annotations

import pytest

from cluster_tests.clients import produce, read_everything
from cluster_tests.conftest import SESSION_TIMEOUT_MS, Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import BrokerError, BrokerProcess
from compat_tests.java_tools import run_tool

STATE = "/brokers/topics/owned/partitions/0/state"


@pytest.mark.cluster_timeout(240)
def test_only_the_same_broker_id_gets_the_replicas_back(cluster: Cluster) -> None:
    # Lagging followers never leave the ISR within the test: only the controller takes a stopped
    # broker out, and its leader must not add it back while it shuts down (it still fetches then).
    cluster.start_brokers({"replica.lag.time.max.ms": "600000"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "owned",
                                  "--replica-assignment", "3:1:2"])
        view.wait_data(STATE, lambda s: s is not None and sorted(s["isr"]) == [1, 2, 3])
        acked = produce(cluster.bootstrap, "owned", list(range(300)))
        meta = (cluster.brokers[3].log_dir / "meta.properties").read_text()
        assert "broker.id=3" in meta and "version=0" in meta, meta

        cluster.brokers[3].stop()
        view.wait_data(STATE, lambda s: s["leader"] in (1, 2) and sorted(s["isr"]) == [1, 2])

        # Another id on broker 3's data: refused before anything there is touched.
        impostor = BrokerProcess(cluster.brokers[3].log_dir, {
            "zookeeper.connect": cluster.zk_connect, "zookeeper.session.timeout.ms": SESSION_TIMEOUT_MS,
            "broker.id": "5", "node.id": "5"}, name="impostor")
        with pytest.raises(BrokerError) as refused:
            impostor.start()
        assert "pykafkad: cannot start: Configured broker.id 5 doesn't match stored broker.id 3 in " \
               in str(refused.value), str(refused.value)
        assert "meta.properties" in str(refused.value)

        # Another id on a fresh data directory: registered, given nothing.
        fresh = cluster.start_broker(5)
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "5"])
        assert not (fresh.log_dir / "owned-0").exists()
        assert view.json("/brokers/topics/owned")["partitions"] == {"0": [3, 1, 2]}
        assert sorted(view.json(STATE)["isr"]) == [1, 2]
        described = run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--describe",
                                              "--topic", "owned"]).stdout
        assert "Replicas: 3,1,2\tIsr: 1,2" in described, described

        # Broker 3 itself: its replica back, caught up, in the ISR.
        cluster.start_broker(3, {"replica.lag.time.max.ms": "600000"})
        view.wait_data(STATE, lambda s: sorted(s["isr"]) == [1, 2, 3])
        got = read_everything(cluster.bootstrap, "owned", 1, len(acked))
        assert {v: (p, o) for v, p, o in got} == acked
    finally:
        view.close()
