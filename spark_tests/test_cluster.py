"""Spark's Kafka source and sink through a leader kill: streaming queries read a replication-factor-3
topic of a three-broker pykafkad cluster while the leader of one of its partitions is killed -9
under acks=all load.  The file sink ends with every acknowledged record exactly once; the Kafka
sink (a copy topic on the same cluster, at-least-once as Spark's Kafka sink is) with every one.

The cluster and ZooKeeper fixtures are the cluster suite's; the SparkSession is this suite's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cluster_tests.clients import Load, create_topic
from cluster_tests.conftest import Cluster, cluster, zookeeper  # noqa: F401 - fixtures
from cluster_tests.znode_watch import ZooKeeperView

PARTITIONS = 3
FAST_ISR = {"replica.lag.time.max.ms": "6000"}


@pytest.mark.spark_timeout(300)
def test_streams_from_and_to_the_cluster_keep_every_acknowledged_record_through_a_leader_kill(
        spark: Any, cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, FAST_ISR)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        states = create_topic(cluster, "clicks", partitions=PARTITIONS, configs={"min.insync.replicas": "2"})
        create_topic(cluster, "clicks-copy", partitions=PARTITIONS, configs={"min.insync.replicas": "2"})
        bootstrap = cluster.bootstrap
        out = tmp_path / "out"

        def source() -> Any:
            return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                    .option("subscribe", "clicks").option("startingOffsets", "earliest")
                    # Kafka's AdminClient waits for a dead leader's node until default.api.timeout.ms
                    # (60 s) before Spark asks again; a shorter one keeps the test short.
                    .option("kafka.default.api.timeout.ms", "10000").option("kafka.request.timeout.ms", "5000")
                    .load())

        to_files = (source().selectExpr("CAST(value AS STRING) AS value", "partition", "offset")
                    .writeStream.format("parquet").option("path", str(out))
                    .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(processingTime="500 milliseconds")
                    .start())
        to_kafka = (source().selectExpr("key", "value").writeStream.format("kafka")
                    .option("kafka.bootstrap.servers", bootstrap).option("topic", "clicks-copy")
                    .option("checkpointLocation", str(tmp_path / "ckpt-copy"))
                    .trigger(processingTime="500 milliseconds").start())
        queries = [to_files, to_kafka]
        try:
            for query in queries:
                query.processAllAvailable()  # the streams run before the load and the kill
            load = Load(bootstrap, "clicks").start()
            load.wait_acked(1000)
            leader = states[0]["leader"]
            cluster.brokers[leader].kill9()
            view.wait_data("/brokers/topics/clicks/partitions/0/state", lambda s: s["leader"] not in (leader, -1))
            load.wait_acked(len(load.acked) + 1000)
            load.stop()
            for query in queries:
                query.processAllAvailable()
                assert query.exception() is None
        finally:
            for query in queries:
                query.stop()
        copy = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", "clicks-copy").option("kafka.default.api.timeout.ms", "10000")
                .option("kafka.request.timeout.ms", "5000").load())
        copied = {int(bytes(r.value)) for r in copy.select("value").collect()}
    finally:
        view.close()
    assert copied == set(load.acked), "the Kafka sink lost or invented records"

    rows = spark.read.parquet(str(out)).collect()
    got = [(int(r.value), r.partition, r.offset) for r in rows]
    values = [v for v, _, _ in got]
    assert len(values) == len(set(values)), "the file sink holds a record twice"
    assert {v: (p, o) for v, p, o in got} == load.acked
