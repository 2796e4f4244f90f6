"""An operator's everyday commands on three brokers, with Kafka's own tools: a topic config changed
with ``kafka-configs`` is in force on every broker that leads a partition of the topic, partitions
added with ``kafka-topics --alter`` are spread over the brokers, ``kafka-consumer-groups
--describe`` shows a group's position across partitions led by different brokers, and
``kafka-log-dirs`` reports every broker's replicas."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer

from cluster_tests.clients import create_topic, produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool


@pytest.mark.cluster_timeout(240)
def test_topic_configs_partitions_groups_and_log_dirs_across_brokers(cluster: Cluster) -> None:
    cluster.start_brokers({"group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "2"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        states = create_topic(cluster, "ops", partitions=3, replication_factor=2)
        assert {s["leader"] for s in states} == {1, 2, 3}, states

        # A topic config set once is in force on every leader: each refuses a record over it.
        run_tool("kafka-configs", ["--bootstrap-server", cluster.bootstrap, "--alter", "--entity-type", "topics",
                                   "--entity-name", "ops", "--add-config", "max.message.bytes=2000"])
        view.wait_data("/config/topics/ops", lambda c: c["config"].get("max.message.bytes") == "2000")
        for node_id, broker in cluster.brokers.items():
            described = run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--describe",
                                                   "--entity-type", "topics", "--entity-name", "ops"]).stdout
            assert "max.message.bytes=2000" in described, (node_id, described)
        refused: dict[int, str] = {}
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "compression.type": "none",
                             "message.max.bytes": 100000})
        for partition in range(3):
            producer.produce("ops", b"x" * 3000, partition=partition,
                             on_delivery=lambda err, msg: refused.__setitem__(msg.partition(), err and err.code()))
        assert producer.flush(60) == 0
        assert refused == {p: KafkaError.MSG_SIZE_TOO_LARGE for p in range(3)}, refused

        # More partitions, placed over every broker.
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--alter", "--topic", "ops",
                                  "--partitions", "6"])
        assignment = view.wait_data("/brokers/topics/ops", lambda a: len(a["partitions"]) == 6)["partitions"]
        added = [assignment[str(p)] for p in range(3, 6)]
        assert all(len(set(r)) == 2 for r in added) and {b for r in added for b in r} == {1, 2, 3}, added
        for p in range(3, 6):
            view.wait_data(f"/brokers/topics/ops/partitions/{p}/state", lambda s: s is not None and len(s["isr"]) == 2)

        # A group's position over partitions led by different brokers.
        acked = produce(cluster.bootstrap, "ops", list(range(600)))
        group = f"ops-readers-{uuid.uuid4().hex[:6]}"
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["ops"])
        seen = 0
        while seen < len(acked):
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                seen += 1
        consumer.commit(asynchronous=False)
        consumer.close()
        out = run_tool("kafka-consumer-groups", ["--bootstrap-server", cluster.bootstrap, "--describe",
                                                  "--group", group]).stdout
        header = next(line.split() for line in out.splitlines() if line.startswith("GROUP"))
        rows = [dict(zip(header, line.split(), strict=False)) for line in out.splitlines() if line.startswith(group)]
        assert len(rows) == 6, out
        assert all(r["CURRENT-OFFSET"] == r["LOG-END-OFFSET"] and r["LAG"] == "0" for r in rows), out
        ends: dict[int, int] = {}
        for partition, offset in acked.values():
            ends[partition] = max(ends.get(partition, 0), offset + 1)
        assert {int(r["PARTITION"]): int(r["LOG-END-OFFSET"]) for r in rows} == \
            {p: ends.get(p, 0) for p in range(6)}, out

        # Every broker's log dir and the replicas in it.
        out = run_tool("kafka-log-dirs", ["--bootstrap-server", cluster.bootstrap, "--describe",
                                          "--topic-list", "ops", "--broker-list", "1,2,3"]).stdout
        report = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
        held = {b["broker"]: {p["partition"] for d in b["logDirs"] for p in d["partitions"]}
                for b in report["brokers"]}
        expected = {b: {f"ops-{p}" for p, r in view.json("/brokers/topics/ops")["partitions"].items() if b in r}
                    for b in (1, 2, 3)}
        assert held == expected, (held, expected)
    finally:
        view.close()
