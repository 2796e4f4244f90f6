"""Live configs: AlterConfigs, IncrementalAlterConfigs, DescribeConfigs sources, DescribeLogDirs.

Driven by confluent-kafka's AdminClient and Kafka's own `kafka-configs` and `kafka-log-dirs`
tools; every change must show in DescribeConfigs with its source, survive a restart, and
take effect on the running log without one.
"""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)

from compat_tests.broker_process import BrokerProcess
from compat_tests.java_tools import run_tool

TIMEOUT_S = 30


def _admin(broker: BrokerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _topic(admin: AdminClient, partitions: int = 1, config: dict[str, str] | None = None) -> str:
    name = f"cfg-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(TIMEOUT_S)
    return name


def _describe(admin: AdminClient, name: str) -> dict[str, ConfigEntry]:
    resource = ConfigResource(ConfigResource.Type.TOPIC, name)
    return admin.describe_configs([resource])[resource].result(TIMEOUT_S)


def _incremental(admin: AdminClient, name: str, *entries: ConfigEntry) -> None:
    resource = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=list(entries))
    admin.incremental_alter_configs([resource])[resource].result(TIMEOUT_S)


def test_incremental_alter_shows_source_and_survives_restart(broker_factory) -> None:
    b = broker_factory("cfg")
    admin = _admin(b)
    name = _topic(admin)
    before = _describe(admin, name)
    # configs/server.properties sets log.retention.hours; Kafka lists retention.ms's broker synonyms only
    # from log.retention.ms on, so none shows and the source reads DEFAULT_CONFIG, as on Kafka
    # (test_describe_configs_kafka compares with Kafka itself).
    assert before["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    assert before["retention.ms"].value == "604800000"

    _incremental(admin, name,
                 ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
                 ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET))
    after = _describe(admin, name)
    assert after["retention.ms"].value == "3600000"
    assert after["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert after["cleanup.policy"].value == "compact"

    _incremental(admin, name,
                 ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.APPEND),
                 ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE))
    after = _describe(admin, name)
    assert after["cleanup.policy"].value == "compact,delete"
    assert after["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value

    b.restart()
    admin = _admin(b)
    assert _describe(admin, name)["cleanup.policy"].value == "compact,delete"


def test_bad_config_is_rejected_with_invalid_config(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    name = _topic(admin)
    with pytest.raises(KafkaException) as err:
        _incremental(admin, name, ConfigEntry("retention.ms", "soon", incremental_operation=AlterConfigOpType.SET))
    assert err.value.args[0].name() == "INVALID_CONFIG"
    with pytest.raises(KafkaException) as err:
        _incremental(admin, name, ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET))
    assert err.value.args[0].name() == "INVALID_CONFIG"
    assert _describe(admin, name)["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value


def test_max_message_bytes_applies_without_restart(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    name = _topic(admin)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "retries": 0,
                         "message.max.bytes": 1_500_000})
    results: list[str] = []

    def send(size: int) -> str:
        results.clear()
        producer.produce(name, b"x" * size, on_delivery=lambda err, msg: results.append(
            err.name() if err else "OK"))
        producer.flush(TIMEOUT_S)
        return results[0]

    assert send(50_000) == "OK"
    _incremental(admin, name, ConfigEntry("max.message.bytes", "10000", incremental_operation=AlterConfigOpType.SET))
    assert send(50_000) == "MSG_SIZE_TOO_LARGE"
    assert send(1_000) == "OK"


def test_kafka_configs_tool_alters_and_describes(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    name = _topic(admin)
    run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--alter", "--entity-type", "topics",
                               "--entity-name", name, "--add-config", "retention.ms=120000,segment.bytes=1048576"])
    out = run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--describe", "--entity-type",
                                     "topics", "--entity-name", name]).stdout
    assert "retention.ms=120000" in out and "segment.bytes=1048576" in out
    run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--alter", "--entity-type", "topics",
                               "--entity-name", name, "--delete-config", "retention.ms"])
    entries = _describe(admin, name)
    assert entries["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    assert entries["segment.bytes"].value == "1048576"
    out = run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--describe", "--all",
                                     "--entity-type", "topics", "--entity-name", name]).stdout
    assert "retention.ms=604800000" in out and "STATIC_BROKER_CONFIG" in out and "DEFAULT_CONFIG" in out


def test_dynamic_broker_default_reaches_topics(broker_factory) -> None:
    b = broker_factory("dyn")
    admin = _admin(b)
    name = _topic(admin)
    run_tool("kafka-configs", ["--bootstrap-server", b.bootstrap, "--alter", "--entity-type", "brokers",
                               "--entity-default", "--add-config", "log.retention.ms=7200000"])
    entry = _describe(admin, name)["retention.ms"]
    assert entry.value == "7200000"
    assert entry.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
    # A key that cannot change at run time is refused with a message saying why.
    bad = run_tool("kafka-configs", ["--bootstrap-server", b.bootstrap, "--alter", "--entity-type", "brokers",
                                     "--entity-default", "--add-config", "num.partitions=3"], check=False)
    assert bad.returncode != 0 and "dynamically" in (bad.stdout + bad.stderr)
    b.restart()
    assert _describe(_admin(b), name)["retention.ms"].value == "7200000"


def test_describe_log_dirs_reports_partition_sizes(broker: BrokerProcess) -> None:
    admin = _admin(broker)
    name = _topic(admin, partitions=2)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(20):
        producer.produce(name, b"v" * 100, partition=i % 2)
    assert producer.flush(TIMEOUT_S) == 0
    out = run_tool("kafka-log-dirs", ["--bootstrap-server", broker.bootstrap, "--describe",
                                      "--topic-list", name]).stdout
    doc = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    partitions = {p["partition"]: p for d in doc["brokers"][0]["logDirs"] for p in d["partitions"]}
    assert set(partitions) == {f"{name}-0", f"{name}-1"}
    assert all(p["size"] > 1000 for p in partitions.values())
