"""Kafka Connect (4.3.1, unchanged) on three brokers: two distributed workers with their config,
offset and status topics replicated three times copy a file through a replicated topic
(FileStreamSource, FileStreamSink); the broker leading the topic is killed -9 halfway and the copy
ends complete, in order, with no line twice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.connect_worker import ConnectWorker

WAIT_S = 120.0


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _wait_lines(path: Path, count: int, workers: list[ConnectWorker]) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(_lines(path)) < count:
        assert time.monotonic() < deadline, f"{len(_lines(path))} of {count} lines copied\n" + \
            "\n".join(w.log_tail() for w in workers)
        time.sleep(0.2)


@pytest.mark.cluster_timeout(300)
def test_file_connectors_on_a_cluster_through_a_leader_kill(cluster: Cluster, tmp_path: Path) -> None:
    cluster.start_brokers({"group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "3"})
    view = ZooKeeperView(cluster.zk_connect)
    workers: list[ConnectWorker] = []
    try:
        [state] = create_topic(cluster, "file-lines", partitions=1, replication_factor=3,
                               configs={"min.insync.replicas": "2"})
        source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
        source_file.write_text("".join(f"line {n}\n" for n in range(1000)))
        workers = [ConnectWorker(cluster.bootstrap, "connect-cluster", tmp_path, name, replication_factor=3).start()
                   for name in ("w1", "w2")]
        workers[0].request("POST", "/connectors", {"name": "file-source", "config": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max": "1", "file": str(source_file), "topic": "file-lines"}})
        workers[0].request("POST", "/connectors", {"name": "file-sink", "config": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "tasks.max": "1", "file": str(sink_file), "topics": "file-lines"}})
        _wait_lines(sink_file, 1000, workers)

        cluster.brokers[state["leader"]].kill9()
        view.wait_data("/brokers/topics/file-lines/partitions/0/state",
                       lambda s: s["leader"] not in (state["leader"], -1))
        with source_file.open("a") as f:
            f.write("".join(f"line {n}\n" for n in range(1000, 2000)))
        _wait_lines(sink_file, 2000, workers)
        assert _lines(sink_file) == [f"line {n}" for n in range(2000)]
    finally:
        for worker in workers:
            worker.stop()
        view.close()
