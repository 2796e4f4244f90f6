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

from cluster_tests.broker_metrics import scrape, scrape_until, start_with_metrics
from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import free_port

STATE = "/brokers/topics/watched/partitions/0/state"


@pytest.mark.cluster_timeout(240)
def test_a_killed_follower_makes_its_partitions_under_replicated(cluster: Cluster) -> None:
    ports = start_with_metrics(cluster, {"replica.lag.time.max.ms": "3000"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        [state] = create_topic(cluster, "watched", configs={"min.insync.replicas": "3"})
        leader = state["leader"]
        follower = next(r for r in state["isr"] if r != leader)
        assert sum(scrape(ports[n])["kafka_controller_kafkacontroller_activecontrollercount"]
                   for n in (1, 2, 3)) == 1
        scrape_until(ports[leader], "kafka_server_replicamanager_underreplicatedpartitions", 0)
        shrinks = scrape(ports[leader])["kafka_server_replicamanager_isrshrinks_total"]
        cluster.brokers[follower].kill9()
        view.wait_data(STATE, lambda s: follower not in s["isr"])
        scrape_until(ports[leader], "kafka_server_replicamanager_underreplicatedpartitions", 1)
        seen = scrape(ports[leader])
        assert seen["kafka_server_replicamanager_underminisrpartitioncount"] == 1
        assert seen["kafka_server_replicamanager_isrshrinks_total"] >= shrinks + 1
        cluster.start_broker(follower)
        view.wait_data(STATE, lambda s: follower in s["isr"])
        scrape_until(ports[leader], "kafka_server_replicamanager_underreplicatedpartitions", 0)
        assert scrape(ports[leader])["kafka_server_replicamanager_isrexpands_total"] >= 1
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
