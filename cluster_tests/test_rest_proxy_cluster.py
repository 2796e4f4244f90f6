"""The REST proxy on three brokers (issue 30): a v2 consumer instance in broker 1's proxy keeps
reading while the leader of its partition (broker 2) is killed -9.  Its librdkafka consumer finds
the new leader; every acknowledged record, written before and after the kill, comes through HTTP
once and in order.  Records produced through the proxy just after the kill are answered once the
proxy's producer has found the new leader, with the offsets they have there.

Three brokers on a real ZooKeeper; the proxy is reached with plain HTTP (httpx).  Every wait is on
an answer (records read, a partition's state znode), never a fixed sleep.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_tests.clients import STATE, produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import free_port
from compat_tests.storage_support import wait_for

SETTINGS = {"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "3",
            "min.insync.replicas": "2", "group.initial.rebalance.delay.ms": "0"}
V2 = "application/vnd.kafka.v2+json"
JSON_RECORDS = "application/vnd.kafka.json.v2+json"


@pytest.mark.cluster_timeout(300)
def test_a_consumer_instance_keeps_reading_while_its_partitions_leader_is_killed(cluster: Cluster) -> None:
    rest_port = free_port()
    cluster.start_broker(1, {**SETTINGS, "rest.listener": f"http://127.0.0.1:{rest_port}"})
    for node_id in (2, 3):
        cluster.start_broker(node_id, SETTINGS)
    view = ZooKeeperView(cluster.zk_connect)
    http = httpx.Client(base_url=f"http://127.0.0.1:{rest_port}", timeout=60)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        # Led by broker 2, so that the broker killed is not the proxy's own.
        topic, leader = "rest-failover", 2
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic(topic, 1, replica_assignment=[[2, 1, 3]])])[topic].result(30)
        view.wait_data(STATE.format(topic=topic, partition=0),
                       lambda s: s is not None and s["leader"] == leader and len(s["isr"]) == 3)
        first = http.post(f"/topics/{topic}", headers={"Content-Type": JSON_RECORDS},
                          json={"records": [{"value": n} for n in range(100)]})
        assert first.status_code == 200, first.text
        assert [o["offset"] for o in first.json()["offsets"]] == list(range(100))

        made = http.post("/consumers/failover", headers={"Content-Type": V2},
                         json={"name": "reader", "format": "json", "auto.offset.reset": "earliest",
                               "auto.commit.enable": "false"})
        assert made.status_code == 200, made.text
        base = "/consumers/failover/instances/reader"
        assigned = http.post(base + "/assignments", headers={"Content-Type": V2},
                             json={"partitions": [{"topic": topic, "partition": 0}]})
        assert assigned.status_code == 204, assigned.text
        got: list[dict[str, Any]] = []

        def read(count: int) -> bool:
            answer = http.get(base + "/records", params={"timeout": 1000}, headers={"Accept": JSON_RECORDS})
            assert answer.status_code == 200, answer.text
            got.extend(answer.json())
            return len(got) >= count

        wait_for("the first records through HTTP", lambda: read(1), timeout=60, interval=0)
        cluster.brokers[leader].kill9()
        # The proxy's producer still has broker 2 as the leader: its connection fails, and it retries
        # on the leader that fresh metadata names.
        after = http.post(f"/topics/{topic}", headers={"Content-Type": JSON_RECORDS},
                          json={"records": [{"value": n} for n in range(100, 150)]})
        assert after.status_code == 200, after.text
        assert [(o["offset"], o["error_code"]) for o in after.json()["offsets"]] == [
            (n, None) for n in range(100, 150)]
        view.wait_data(STATE.format(topic=topic, partition=0),
                       lambda s: s is not None and s["leader"] not in (-1, leader))
        produce(",".join(cluster.brokers[n].bootstrap for n in (1, 2, 3) if n != leader), topic,
                list(range(150, 250)))
        wait_for("250 records through HTTP", lambda: read(250), timeout=120, interval=0)
        assert [r["offset"] for r in got] == list(range(250))
        assert [r["value"] for r in got] == list(range(250))
        assert http.delete(base).status_code == 204
    finally:
        http.close()
        view.close()
