"""Kafka Connect (4.3.1, unchanged) in distributed mode on pykafkad: its config, offset and status
topics (compacted), its workers forming a group with the connect protocol, and the FileStreamSource
and FileStreamSink connectors copying a file through a topic.  A restarted worker resumes from its
stored offsets (nothing copied twice, nothing skipped), and a second worker takes a share of the
work in a rebalance."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from compat_tests.clients import create_topic
from compat_tests.conftest import SHARED_OVERRIDES, BrokerFactory
from compat_tests.connect_worker import ConnectWorker

WAIT_S = 120.0


def _wait(predicate, what: str, workers: list[ConnectWorker]) -> None:  # noqa: ANN001 - a condition
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"{what} never happened\n" + "\n".join(w.log_tail() for w in workers)
        time.sleep(0.2)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.compat_timeout(300)
def test_file_connectors_through_a_topic_across_worker_restart_and_rebalance(
        broker_factory: BrokerFactory, tmp_path: Path) -> None:
    # A broker of its own, as the shared one but with no initial rebalance delay: the workers' group
    # and the sink's consumer group each start empty three times here (first start, restart, the
    # sink task moving), and each time Kafka's default would hold the first join 3 s.
    broker = broker_factory("connect", {**SHARED_OVERRIDES, "group.initial.rebalance.delay.ms": "0"})
    suffix = uuid.uuid4().hex[:8]
    group, topic = f"connect-{suffix}", f"file-lines-{suffix}"
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"line {n}\n" for n in range(500)))
    # The broker does not create topics on first use (auto.create.topics.enable=false).
    create_topic(broker.bootstrap, topic, 2)
    first = ConnectWorker(broker.bootstrap, group, tmp_path, "w1").start()
    second = None
    try:
        first.request("POST", "/connectors", {"name": "file-source", "config": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max": "1", "file": str(source_file), "topic": topic}})
        first.request("POST", "/connectors", {"name": "file-sink", "config": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "tasks.max": "1", "file": str(sink_file), "topics": topic}})
        _wait(lambda: len(_lines(sink_file)) >= 500, "the first 500 lines copied", [first])
        assert _lines(sink_file) == [f"line {n}" for n in range(500)]

        # Stopped, more lines written, started again: it goes on from its stored offsets.
        first.stop()
        with source_file.open("a") as f:
            f.write("".join(f"line {n}\n" for n in range(500, 1000)))
        first.start()
        _wait(lambda: len(_lines(sink_file)) >= 1000, "the next 500 lines copied", [first])
        assert _lines(sink_file) == [f"line {n}" for n in range(1000)]

        # A second worker joins: the group rebalances and it runs part of the work.
        second = ConnectWorker(broker.bootstrap, group, tmp_path, "w2").start()

        def spread() -> bool:
            owners = set()
            for name in ("file-source", "file-sink"):
                status = first.request("GET", f"/connectors/{name}/status")
                owners |= {t["worker_id"] for t in status["tasks"] if t["state"] == "RUNNING"}
            return len(owners) == 2
        _wait(spread, "tasks spread over both workers", [first, second])
        with source_file.open("a") as f:
            f.write("".join(f"line {n}\n" for n in range(1000, 1200)))
        _wait(lambda: len(_lines(sink_file)) >= 1200, "lines copied after the rebalance", [first, second])
        assert _lines(sink_file) == [f"line {n}" for n in range(1200)]
        for name in ("file-source", "file-sink"):
            assert first.request("GET", f"/connectors/{name}/status")["connector"]["state"] == "RUNNING"
    finally:
        for worker in (second, first):
            if worker is not None:
                worker.stop()
