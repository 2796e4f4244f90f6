"""``kafka-features.sh --release``: Kafka's tool moves every feature of a release at once
(``upgrade --release 4.4`` names metadata.version, kraft.version, group.version, ...), and
pykafkad takes it, refuses what Kafka refuses with Kafka's words, and answers the dry runs as
the reference Kafka 4.4.0 does."""

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
    # Kafka 4.4's tool pads its columns with spaces (4.1's used tabs).
    return dict(re.findall(r"Feature: (\S+)\s.*?FinalizedVersionLevel: (\S+)\s", out))


def test_release_upgrade_downgrade_and_disable(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("features-release")
    assert finalized(broker)["metadata.version"] == "4.4-IV2"
    _, mapping = features(broker, "version-mapping", "--release", "4.4")
    assert "metadata.version=33 (4.4)" in mapping, mapping

    _, out = features(broker, "upgrade", "--release", "4.4")
    for line in ("metadata.version was upgraded to 33.", "transaction.version was upgraded to 2.",
                 "group.version was upgraded to 1.", "kraft.version was upgraded to 1.",
                 "eligible.leader.replicas.version was upgraded to 1.", "share.version was upgraded to 2.",
                 "streams.version was upgraded to 1."):
        assert line in out, out
    assert "failed" not in out, out
    levels = finalized(broker)
    assert levels["streams.version"] == "1" and levels["metadata.version"] == "4.4-IV2", levels

    # Every release before 4.4 is across a metadata change (4.4-IV2 is one): refused as Kafka
    # refuses it, nothing changed.
    for release, level in (("4.3", 30), ("3.9", 21)):
        code, out = features(broker, "downgrade", "--release", release, check=False)
        refusal = f"Invalid metadata.version {level}. Refusing to perform the requested downgrade"
        assert code != 0 and refusal in out, out
        assert finalized(broker) == levels

    _, out = features(broker, "downgrade", "--feature", "share.version=1", "--feature",
                      "eligible.leader.replicas.version=0")
    assert "share.version was downgraded to 1." in out, out
    assert "eligible.leader.replicas.version was downgraded to 0." in out, out
    assert finalized(broker)["share.version"] == "1"

    _, out = features(broker, "disable", "--feature", "group.version")
    assert "group.version was disabled." in out, out
    _, out = features(broker, "upgrade", "--release", "4.4")
    assert "metadata.version was upgraded to 33." in out and "failed" not in out, out
    assert finalized(broker) == levels


def test_release_dry_runs_answer_as_kafka(broker_factory: BrokerFactory, reference_kafka: BrokerProcess) -> None:
    broker = broker_factory("features-compare")
    # pykafkad leaves the features it does not implement off until told: bring it where a new
    # Kafka 4.4 cluster starts.  Not compared: dry runs that depend on kraft.version, which Kafka's
    # quorum starts at 0 and pykafkad (no quorum) has at 1 now.
    features(broker, "upgrade", "--release", "4.4")
    for args in (["upgrade", "--release", "4.4", "--dry-run"],
                 ["upgrade", "--release", "4.1", "--dry-run"],
                 ["upgrade", "--release", "3.3", "--dry-run"],
                 ["disable", "--feature", "transaction.version", "--dry-run"],
                 ["upgrade", "--feature", "transaction.version=3", "--dry-run"]):
        ours = features(broker, *args, check=False)
        kafka = features(reference_kafka, *args, check=False)
        # Kafka's broker is its own controller and says so; the rest is word for word.
        assert ours[0] == kafka[0] and ours[1] == kafka[1].replace("Local controller", "Broker"), (args, ours, kafka)
