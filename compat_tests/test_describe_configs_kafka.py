"""DescribeConfigs as Kafka reports it: `kafka-configs --describe --all` against pykafkad and
against a real Kafka 4.1.1 broker started with the same static settings.

For every config pykafkad describes, the value and the synonyms (source, key and value, in order)
must be what Kafka prints.  Each synonym's value is in its own key's unit (before, a broker key in
minutes or hours was shown converted to ms, and listed under a topic's `retention.ms` where
Kafka lists nothing), and `broker.id` agrees with `node.id`.
"""

from __future__ import annotations

import re

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic
from compat_tests.conftest import REFERENCE_OVERRIDES
from compat_tests.java_tools import run_tool

ENTRY = re.compile(r"^\s+(?P<name>[^=\s]+)=(?P<value>.*) sensitive=(?:true|false) synonyms=\{(?P<synonyms>.*)\}$")
TOPIC = "described"
TOPIC_OVERRIDES = {"retention.ms": "3600000", "cleanup.policy": "compact"}
# Broker keys whose values differ between any two brokers by nature, not by behaviour.
PER_PROCESS = {"listeners", "advertised.listeners", "log.dirs", "cluster.id"}
# Configs (topic or broker) pykafkad describes differently from Kafka, and why.
KNOWN_DIFFERENCES: dict[str, str] = {
    "min.insync.replicas": "Kafka 4's KRaft controller records the cluster-wide default min.insync.replicas "
                           "as a dynamic default config when it bootstraps (KIP-966); pykafkad has no such record",
}


def _describe(bootstrap: str, *entity: str) -> dict[str, tuple[str, str]]:
    out = run_tool("kafka-configs", ["--bootstrap-server", bootstrap, "--describe", "--all", *entity]).stdout
    found = {}
    for line in out.splitlines():
        m = ENTRY.match(line)
        if m:
            found[m["name"]] = (m["value"], m["synonyms"])
    assert found, out
    return found


def _mismatches(ours: dict[str, tuple[str, str]], theirs: dict[str, tuple[str, str]], skipped: set[str]) -> str:
    """One line per config whose value or synonyms differ: readable in a failure report."""
    return "\n".join(f"{name}:\n  pykafkad {ours[name]}\n  kafka    {theirs.get(name)}"
                     for name in sorted(ours) if name not in skipped and ours[name] != theirs.get(name))


@pytest.fixture(scope="module")
def kafka_view(reference_kafka: BrokerProcess) -> dict[str, dict[str, tuple[str, str]]]:
    create_topic(reference_kafka.bootstrap, TOPIC, config=TOPIC_OVERRIDES)
    return {
        "topic": _describe(reference_kafka.bootstrap, "--entity-type", "topics", "--entity-name", TOPIC),
        "broker": _describe(reference_kafka.bootstrap, "--entity-type", "brokers", "--entity-name", "1"),
    }


class BareBroker(BrokerProcess):
    """pykafkad with no properties file: only the overrides, as the reference Kafka is configured."""

    def command(self) -> list[str]:
        cmd = super().command()
        del cmd[cmd.index("serve") + 1]
        return cmd


@pytest.fixture(scope="module")
def pykafkad_view(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, tuple[str, str]]]:
    # The reference Kafka also sets this one (compat_tests.reference_kafka).
    overrides = {**REFERENCE_OVERRIDES, "group.initial.rebalance.delay.ms": "0"}
    broker = BareBroker(tmp_path_factory.mktemp("describe-configs") / "logs", overrides).start()
    try:
        create_topic(broker.bootstrap, TOPIC, config=TOPIC_OVERRIDES)
        return {
            "topic": _describe(broker.bootstrap, "--entity-type", "topics", "--entity-name", TOPIC),
            "broker": _describe(broker.bootstrap, "--entity-type", "brokers", "--entity-name", "1"),
        }
    finally:
        broker.stop()


def test_topic_configs_match_kafka(pykafkad_view: dict, kafka_view: dict) -> None:
    ours, theirs = pykafkad_view["topic"], kafka_view["topic"]
    # Kafka lists a topic config's broker synonyms only from its most specific key on
    # (log.retention.ms, log.roll.ms): set in minutes or hours, they show no synonym at all.
    assert ours["retention.ms"] == ("3600000", "DYNAMIC_TOPIC_CONFIG:retention.ms=3600000"), ours["retention.ms"]
    assert ours["segment.ms"] == ("172800000", ""), ours["segment.ms"]
    assert ours["delete.retention.ms"] == (
        "3600000", "STATIC_BROKER_CONFIG:log.cleaner.delete.retention.ms=3600000, "
        "DEFAULT_CONFIG:log.cleaner.delete.retention.ms=86400000"), ours["delete.retention.ms"]
    skipped = set(KNOWN_DIFFERENCES)
    assert not _mismatches(ours, theirs, skipped), _mismatches(ours, theirs, skipped)


def test_broker_configs_match_kafka(pykafkad_view: dict, kafka_view: dict) -> None:
    ours, theirs = pykafkad_view["broker"], kafka_view["broker"]
    assert ours["broker.id"][0] == ours["node.id"][0] == "1"
    assert theirs["broker.id"][0] == theirs["node.id"][0] == "1"
    skipped = PER_PROCESS | set(KNOWN_DIFFERENCES)
    assert not _mismatches(ours, theirs, skipped), _mismatches(ours, theirs, skipped)
