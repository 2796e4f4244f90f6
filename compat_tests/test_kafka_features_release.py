"""``kafka-features.sh --release``: Kafka's tool moves every feature of a release at once
(``upgrade --release 4.1`` names metadata.version, kraft.version, group.version, ...), and
pykafkad takes it, refuses what Kafka refuses with Kafka's words, and answers the dry runs as
the reference Kafka 4.1.1 does."""

from __future__ import annotations

import re

from compat_tests.broker_process import BrokerProcess
from compat_tests.conftest import BrokerFactory
from compat_tests.java_tools import run_tool


def features(broker: BrokerProcess, *args: str, check: bool = True) -> tuple[int, str]:
    result = run_tool("kafka-features", ["--bootstrap-server", broker.bootstrap, *args], check=check)
    return result.returncode, result.stdout + result.stderr


def finalized(broker: BrokerProcess) -> dict[str, str]:
    """feature -> FinalizedVersionLevel, from ``describe``."""
    _, out = features(broker, "describe")
    return dict(re.findall(r"Feature: (\S+)\t.*FinalizedVersionLevel: (\S+)\t", out))


def test_release_upgrade_downgrade_and_disable(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("features-release")
    assert finalized(broker)["metadata.version"] == "4.1-IV1"
    _, mapping = features(broker, "version-mapping", "--release", "4.1")
    assert "metadata.version=27 (4.1)" in mapping, mapping

    _, out = features(broker, "upgrade", "--release", "4.1")
    for line in ("metadata.version was upgraded to 27.", "transaction.version was upgraded to 2.",
                 "group.version was upgraded to 1.", "kraft.version was upgraded to 1.",
                 "eligible.leader.replicas.version was upgraded to 1."):
        assert line in out, out
    assert "failed" not in out, out
    levels = finalized(broker)
    assert levels["group.version"] == "1" and levels["metadata.version"] == "4.1-IV1", levels

    # 3.9 is across a metadata change: refused as Kafka refuses it, nothing changed.
    code, out = features(broker, "downgrade", "--release", "3.9", check=False)
    assert code != 0 and "Invalid metadata.version 21. Refusing to perform the requested downgrade" in out, out
    assert finalized(broker) == levels

    _, out = features(broker, "downgrade", "--release", "4.0")
    assert "metadata.version was downgraded to 25." in out, out
    assert "eligible.leader.replicas.version was downgraded to 0." in out, out
    assert finalized(broker)["metadata.version"] == "4.0-IV3"

    _, out = features(broker, "disable", "--feature", "group.version")
    assert "group.version was disabled." in out, out
    _, out = features(broker, "upgrade", "--release", "4.1")
    assert "metadata.version was upgraded to 27." in out and "failed" not in out, out
    assert finalized(broker) == levels


def test_release_dry_runs_answer_as_kafka(broker_factory: BrokerFactory, reference_kafka: BrokerProcess) -> None:
    broker = broker_factory("features-compare")
    # pykafkad leaves the features it does not implement off until told: bring it where a new
    # Kafka 4.1 cluster starts.  Not compared: dry runs that depend on kraft.version, which Kafka's
    # quorum starts at 0 and pykafkad (no quorum) has at 1 now.
    features(broker, "upgrade", "--release", "4.1")
    for args in (["upgrade", "--release", "4.1", "--dry-run"],
                 ["upgrade", "--release", "3.3", "--dry-run"],
                 ["disable", "--feature", "transaction.version", "--dry-run"],
                 ["upgrade", "--feature", "transaction.version=3", "--dry-run"]):
        ours = features(broker, *args, check=False)
        kafka = features(reference_kafka, *args, check=False)
        # Kafka's broker is its own controller and says so; the rest is word for word.
        assert ours[0] == kafka[0] and ours[1] == kafka[1].replace("Local controller", "Broker"), (args, ours, kafka)
