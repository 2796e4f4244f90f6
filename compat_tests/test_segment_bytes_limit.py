"""``log.segment.bytes`` has Kafka 4's 1 MiB minimum: below it the broker does not start, and a
dynamic broker config below it is refused with Kafka's answer (compared with a real Kafka 4.4.0).
Tests that want small segments set the internal ``internal.log.segment.bytes`` (the broker-wide
default of Kafka's topic-level ``internal.segment.bytes``), which DescribeConfigs never shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from compat_tests.broker_process import SERVER_PROPERTIES, BrokerProcess, free_port
from compat_tests.clients import ConfluentClient, create_topic, sample_records, unique_topic

REPO_ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 30.0
KAFKA_MESSAGE = "Invalid value 1000 for configuration log.segment.bytes: Value must be at least 1048576"


def test_small_log_segment_bytes_stops_startup(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "pykafkad", "serve", str(SERVER_PROPERTIES),
           "--override", f"log.dirs={tmp_path / 'logs'}",
           "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
           "--override", "log.segment.bytes=1000"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"pykafkad: bad configuration: {KAFKA_MESSAGE}"]


def _outcome(future: object) -> tuple[str, str]:
    try:
        future.result(TIMEOUT_S)  # type: ignore[attr-defined]
    except KafkaException as e:
        return e.args[0].name(), e.args[0].str()
    return "NONE", ""


def _answers(bootstrap: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    found = {}
    # confluent-kafka cannot name the cluster default (""); the broker's own id it can.
    for name in ("1",):
        for value in ("1000", "1048576"):
            resource = ConfigResource(ConfigResource.Type.BROKER, name, incremental_configs=[
                ConfigEntry("log.segment.bytes", value, incremental_operation=AlterConfigOpType.SET)])
            found[("IncrementalAlterConfigs", name, value)] = _outcome(
                admin.incremental_alter_configs([resource], validate_only=True)[resource])
    return found


@pytest.fixture(scope="module")
def kafka_answers(reference_kafka: BrokerProcess) -> dict[tuple[str, str, str], tuple[str, str]]:
    return _answers(reference_kafka.bootstrap)


def test_dynamic_log_segment_bytes_below_the_minimum_is_refused_as_kafka(broker: BrokerProcess,
                                                                         kafka_answers: dict) -> None:
    ours = _answers(broker.bootstrap)
    assert ours[("IncrementalAlterConfigs", "1", "1000")] == ("INVALID_REQUEST", KAFKA_MESSAGE)
    assert ours == kafka_answers


def test_internal_log_segment_bytes_makes_small_segments_and_is_not_described(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs", {"internal.log.segment.bytes": "1024"}, name="small-segments").start()
    try:
        topic = unique_topic("internal-broker-segments")
        create_topic(broker.bootstrap, topic)
        ConfluentClient(broker.bootstrap).produce(topic, sample_records(100, 1_700_000_000_000),
                                                  **{"linger.ms": 0, "batch.num.messages": 5})
        segments = sorted(broker.partition_dir(topic).glob("*.log"))
        assert len(segments) > 2, segments
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        resource = ConfigResource(ConfigResource.Type.BROKER, "1")
        described = admin.describe_configs([resource])[resource].result(TIMEOUT_S)
        assert "log.segment.bytes" in described and "internal.log.segment.bytes" not in described
        assert described["log.segment.bytes"].value == "1073741824"
    finally:
        broker.stop()
