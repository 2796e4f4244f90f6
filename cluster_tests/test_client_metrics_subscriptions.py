"""Client-metrics subscriptions in a cluster: one set through a broker is kept in ZooKeeper
(``/config/client-metrics/<name>``, the name sanitized as a quota entity's) and every broker's cache
hears of it; deleting every key through another broker removes it everywhere."""

from __future__ import annotations

import json
import time

from cluster_tests.conftest import Cluster
from cluster_tests.zookeeper_server import zk_cli
from compat_tests.client_metrics_support import DELETE, SET, alter, describe, listed
from compat_tests.raw_kafka import RawConnection

WAIT_S = 30.0


def _wait_values(port: int, name: str, want: dict[str, str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        with RawConnection(port) as conn:
            got = {entry[0]: entry[1] for entry in describe(conn, name)[1]}
        if got == want:
            return
        assert time.monotonic() < deadline, f"broker on {port} describes {got}, not {want}"
        time.sleep(0.1)


def test_a_subscription_set_on_one_broker_is_seen_by_another(cluster: Cluster) -> None:
    one, two = cluster.start_broker(1), cluster.start_broker(2)
    with RawConnection(one.port) as conn:
        assert alter(conn, "apps/java", [("metrics", SET, "org.apache.kafka."), ("interval.ms", SET, "10000"),
                                          ("match", SET, "client_software_name=apache-kafka-java")]) == (0, None)
    node = json.loads(zk_cli(cluster.zk_connect, "get", "/config/client-metrics/apps%2Fjava"))
    assert node == {"version": 1, "config": {"metrics": "org.apache.kafka.", "interval.ms": "10000",
                                             "match": "client_software_name=apache-kafka-java"}}
    _wait_values(two.port, "apps/java", {"interval.ms": "10000", "match": "client_software_name=apache-kafka-java",
                                         "metrics": "org.apache.kafka."})

    with RawConnection(two.port) as conn:
        assert alter(conn, "apps/java", [("metrics", DELETE, None), ("interval.ms", DELETE, None),
                                          ("match", DELETE, None)]) == (0, None)
    deadline = time.monotonic() + WAIT_S
    while True:
        with RawConnection(one.port) as conn:
            if listed(conn, "apps") == []:
                break
        assert time.monotonic() < deadline, "the subscription is still listed on broker 1"
        time.sleep(0.1)
    assert "apps%2Fjava" not in zk_cli(cluster.zk_connect, "ls", "/config/client-metrics")
