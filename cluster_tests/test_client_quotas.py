"""Client quotas in a cluster: a quota set through one broker is kept in ZooKeeper at Kafka's path
(``/config/clients/<c>``, ``/config/users/<u>/clients/<c>``), every broker's cache hears of it, and
the other broker holds the client to it."""

from __future__ import annotations

import json
import time
from typing import Any

from cluster_tests.conftest import Cluster
from cluster_tests.zookeeper_server import zk_cli
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from compat_tests.test_client_quotas import ANY, EXACT, alter, describe, described, entity, raw_produce

WAIT_S = 30.0


def wait_described(broker: Any, components: list[tuple[str, int, str | None]], want: dict) -> None:
    """Until ``broker`` describes what ``components`` match as ``want`` (its cache is fed by watches)."""
    deadline = time.monotonic() + WAIT_S
    while (got := described(describe(broker, components, strict=True))) != want:
        assert time.monotonic() < deadline, f"{broker.name} still describes {got}, not {want}"
        time.sleep(0.1)


def test_a_quota_set_on_one_broker_holds_on_another(cluster: Cluster) -> None:
    # A short quota window, so one request is enough to go over (compat_tests/test_client_quotas.py).
    window = {"quota.window.num": "2", "quota.window.size.seconds": "1"}
    one, two = cluster.start_broker(1, window), cluster.start_broker(2, window)
    run_tool("kafka-configs", ["--bootstrap-server", one.bootstrap, "--alter", "--entity-type", "clients",
                               "--entity-name", "app", "--add-config", "producer_byte_rate=100000"])
    node = json.loads(zk_cli(cluster.zk_connect, "get", "/config/clients/app"))
    assert node == {"version": 1, "config": {"producer_byte_rate": "100000"}}
    wait_described(two, [("client-id", EXACT, "app")], {(("client-id", "app"),): {"producer_byte_rate": 100000.0}})

    # A user's client id, set through the second broker, seen by the first.
    assert alter(two, [(entity("alice", "app"), {"consumer_byte_rate": 5000})])[0]["error_code"] == 0
    node = json.loads(zk_cli(cluster.zk_connect, "get", "/config/users/alice/clients/app"))
    assert node == {"version": 1, "config": {"consumer_byte_rate": "5000"}}
    wait_described(one, [("user", EXACT, "alice"), ("client-id", ANY, None)],
                   {(("client-id", "app"), ("user", "alice")): {"consumer_byte_rate": 5000.0}})

    # The second broker holds a producer with client id "app" to the first one's quota.
    with RawConnection(two.port) as conn:
        created = conn.request(19, 7, {"timeout_ms": 30000, "validate_only": False, "topics": [{
            "name": "quota-t", "num_partitions": -1, "replication_factor": -1, "configs": [],
            "assignments": [{"partition_index": 0, "broker_ids": [2]}]}]})
        assert created["topics"][0]["error_code"] == 0, created
        conn.wait_for_leader("quota-t")
        response = raw_produce(conn, "app", "quota-t", 250_000)
    assert response["responses"][0]["partition_responses"][0]["error_code"] == 0
    assert response["throttle_time_ms"] >= 1000, response["throttle_time_ms"]

    # Removed through the first broker: gone from ZooKeeper and from the second broker's view.
    assert alter(one, [(entity(client_id="app"), {"producer_byte_rate": None})])[0]["error_code"] == 0
    wait_described(two, [("client-id", EXACT, "app")], {})
