"""Metrics on a cluster: a leader whose follower is killed reports the partition under-replicated
(and under min.insync.replicas), counts the ISR shrink, and reports health again once the follower
is back; only the controller reports itself active.  /readyz turns 503 while a broker is not
registered in the cluster."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import free_port

STATE = "/brokers/topics/watched/partitions/0/state"


def _scrape(port: int) -> dict[str, float]:
    """The unlabelled samples of a broker's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}


def _until(port: int, name: str, wanted: float, timeout: float = 60) -> None:
    """Scrape until ``name`` reads ``wanted`` (the broker's state has caught up with the event)."""
    deadline = time.monotonic() + timeout
    while (seen := _scrape(port).get(name)) != wanted:
        assert time.monotonic() < deadline, f"{name} is {seen}, not {wanted}"
        time.sleep(0.1)


@pytest.mark.cluster_timeout(240)
def test_a_killed_follower_makes_its_partitions_under_replicated(cluster: Cluster) -> None:
    ports = {node_id: free_port() for node_id in (1, 2, 3)}
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, {"metrics.listener": f"http://127.0.0.1:{ports[node_id]}",
                                       "replica.lag.time.max.ms": "3000"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        [state] = create_topic(cluster, "watched", configs={"min.insync.replicas": "3"})
        leader = state["leader"]
        follower = next(r for r in state["isr"] if r != leader)
        assert sum(_scrape(ports[n])["kafka_controller_kafkacontroller_activecontrollercount"]
                   for n in (1, 2, 3)) == 1
        _until(ports[leader], "kafka_server_replicamanager_underreplicatedpartitions", 0)
        shrinks = _scrape(ports[leader])["kafka_server_replicamanager_isrshrinks_total"]
        cluster.brokers[follower].kill9()
        view.wait_data(STATE, lambda s: follower not in s["isr"])
        _until(ports[leader], "kafka_server_replicamanager_underreplicatedpartitions", 1)
        seen = _scrape(ports[leader])
        assert seen["kafka_server_replicamanager_underminisrpartitioncount"] == 1
        assert seen["kafka_server_replicamanager_isrshrinks_total"] >= shrinks + 1
        cluster.start_broker(follower)
        view.wait_data(STATE, lambda s: follower in s["isr"])
        _until(ports[leader], "kafka_server_replicamanager_underreplicatedpartitions", 0)
        assert _scrape(ports[leader])["kafka_server_replicamanager_isrexpands_total"] >= 1
    finally:
        view.close()


def _readyz(port: int) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.cluster_timeout(180)
def test_readyz_is_503_while_the_broker_is_not_registered(cluster: Cluster) -> None:
    port = free_port()
    cluster.start_broker(1)
    cluster.start_broker(2, {"metrics.listener": f"http://127.0.0.1:{port}"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        assert _readyz(port) == (200, {"ready": True, "problems": []})
        # Its registration removed behind its back (an operator's mistake): a probe must take it
        # out of service, and /healthz still says the process is alive.
        view.zk.delete("/brokers/ids/2")
        deadline = time.monotonic() + 60
        while (seen := _readyz(port))[0] != 503:
            assert time.monotonic() < deadline, seen
            time.sleep(0.1)
        assert "broker 2 is not registered in the cluster" in seen[1]["problems"], seen
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
            assert answer.status == 200
        cluster.brokers[2].stop()
        cluster.start_broker(2, {"metrics.listener": f"http://127.0.0.1:{port}"})
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        deadline = time.monotonic() + 60
        while (seen := _readyz(port))[0] != 200:
            assert time.monotonic() < deadline, seen
            time.sleep(0.1)
    finally:
        view.close()
