"""A replica moved between the two log dirs of one broker (AlterReplicaLogDirs), as
``kafka-reassign-partitions`` does for a plan with ``log_dirs``: the partition keeps its records,
takes new ones, is reported in its new directory by ``kafka-log-dirs``, and is found there after a
restart.  Kafka's refusals: a path outside ``log.dirs`` (LOG_DIR_NOT_FOUND), a replica the broker
does not hold (UNKNOWN_TOPIC_OR_PARTITION for an unknown topic)."""

from __future__ import annotations

import json
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

ALTER_REPLICA_LOG_DIRS = 34
NONE, UNKNOWN_TOPIC_OR_PARTITION, LOG_DIR_NOT_FOUND = 0, 3, 57


def _produce(bootstrap: str, topic: str, values: range) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for n in values:
        producer.produce(topic, str(n).encode(), partition=0)
    assert producer.flush(30) == 0


def _read(bootstrap: str, topic: str, count: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[int] = []
    try:
        while len(got) < count:
            msg = consumer.poll(1.0)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(int(msg.value()))
    finally:
        consumer.close()
    return got


def _log_dirs(bootstrap: str, topic: str) -> dict[str, set[str]]:
    out = run_tool("kafka-log-dirs", ["--bootstrap-server", bootstrap, "--describe", "--topic-list", topic]).stdout
    report = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    return {d["logDir"]: {p["partition"] for p in d["partitions"]} for b in report["brokers"] for d in b["logDirs"]}


def test_a_replica_moves_to_another_log_dir_and_stays_there(tmp_path: Path) -> None:
    first, second = (tmp_path / "data" / "one").resolve(), (tmp_path / "data" / "two").resolve()
    broker = BrokerProcess(tmp_path / "data" / "one", {"log.dirs": f"{first},{second}",
                                                       "auto.create.topics.enable": "false"}, name="two-dirs")
    broker.start()
    try:
        create_topic(broker.bootstrap, "moved", 1)
        topic_dir = next(d for d in (first, second) if (d / "moved-0").exists())
        other = second if topic_dir == first else first
        _produce(broker.bootstrap, "moved", range(500))

        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": "moved", "partition": 0, "replicas": [1], "log_dirs": [str(other)]}]}))
        out = run_tool("kafka-reassign-partitions", ["--bootstrap-server", broker.bootstrap,
                                                      "--reassignment-json-file", str(plan), "--execute"]).stdout
        assert f"Successfully started moving log directory to {other} for replica moved-0 with broker 1" in out, out
        out = run_tool("kafka-reassign-partitions", ["--bootstrap-server", broker.bootstrap,
                                                      "--reassignment-json-file", str(plan), "--verify"]).stdout
        assert "Reassignment of replica moved-0-1 completed successfully." in out, out
        assert (other / "moved-0").is_dir() and not (topic_dir / "moved-0").exists()
        assert _log_dirs(broker.bootstrap, "moved") == {str(topic_dir): set(), str(other): {"moved-0"}}

        _produce(broker.bootstrap, "moved", range(500, 700))
        assert _read(broker.bootstrap, "moved", 700) == list(range(700))
        broker.stop()
        broker.start()
        assert _read(broker.bootstrap, "moved", 700) == list(range(700))
        assert _log_dirs(broker.bootstrap, "moved") == {str(topic_dir): set(), str(other): {"moved-0"}}

        with RawConnection(broker.port) as conn:
            answer = conn.request(ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [
                {"path": str(tmp_path / "elsewhere"), "topics": [{"name": "moved", "partitions": [0]}]},
                {"path": str(topic_dir), "topics": [{"name": "no-such-topic", "partitions": [0]}]}]})
        codes = {(r["topic_name"], p["partition_index"]): p["error_code"]
                 for r in answer["results"] for p in r["partitions"]}
        assert codes == {("moved", 0): LOG_DIR_NOT_FOUND, ("no-such-topic", 0): UNKNOWN_TOPIC_OR_PARTITION}
    finally:
        broker.close()


def test_a_directory_of_an_earlier_topic_of_the_same_name_is_set_aside(tmp_path: Path) -> None:
    """Each partition directory names its topic's id (Kafka's ``partition.metadata``); one whose id
    is not the topic's (left by a topic deleted and created again while the broker was down) is
    renamed ``-stray`` at start rather than served as the new topic's data."""
    broker = BrokerProcess(tmp_path / "logs", {"auto.create.topics.enable": "false"}, name="stray")
    broker.start()
    try:
        create_topic(broker.bootstrap, "reborn", 1)
        _produce(broker.bootstrap, "reborn", range(10))
        metadata = broker.log_dir / "reborn-0" / "partition.metadata"
        assert metadata.read_text().startswith("version: 0\ntopic_id: ")
        broker.stop()
        # As if the directory had been left by an earlier topic "reborn".
        metadata.write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
        broker.start()
        assert [p.name for p in broker.log_dir.glob("reborn-0.*-stray")], list(broker.log_dir.iterdir())
        assert "belongs to an earlier topic reborn" in broker.stderr_text()
        _produce(broker.bootstrap, "reborn", range(100, 103))
        assert _read(broker.bootstrap, "reborn", 3) == [100, 101, 102]
    finally:
        broker.close()
