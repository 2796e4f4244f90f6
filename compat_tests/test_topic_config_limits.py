"""Topic configs are checked against Kafka 4.1's own bounds and valid values, with Kafka's messages.

Each case goes to pykafkad and to a real Kafka 4.4.0 broker (compat_tests' reference mode) through
CreateTopics, IncrementalAlterConfigs and AlterConfigs (legacy, whole set), and both must answer the
same: the same error code and message, or success.  Before, pykafkad took `segment.bytes` down to
14 bytes, which Kafka 4 refuses below 1 MiB; a script that worked here broke when moved to Kafka.
Tests that need small segments use Kafka's internal key `internal.segment.bytes`, as Kafka's own
tests do.
"""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic

TIMEOUT_S = 30.0
# The legacy AlterConfigs is exercised on purpose: stock tools still send it.
pytestmark = pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")

CASES: list[tuple[str, str]] = [
    ("segment.bytes", "100"),
    ("segment.bytes", "1048575"),
    ("segment.bytes", "1048576"),
    ("segment.bytes", "abc"),
    ("segment.bytes", "3000000000"),
    ("segment.index.bytes", "2"),
    ("max.message.bytes", "-1"),
    ("min.insync.replicas", "0"),
    ("retention.ms", "-2"),
    ("retention.ms", "-1"),
    ("retention.ms", "1.5"),
    ("retention.bytes", "-5"),
    ("retention.bytes", "lots"),
    ("cleanup.policy", "foo"),
    ("cleanup.policy", "compact,foo"),
    ("cleanup.policy", "Compact"),
    ("cleanup.policy", "delete, compact"),
    ("compression.type", "brotli"),
    ("compression.type", "zstd"),
    ("message.timestamp.type", "Now"),
    ("compression.gzip.level", "10"),
    ("compression.zstd.level", "23"),
    ("compression.lz4.level", "0"),
    ("min.cleanable.dirty.ratio", "1.5"),
    ("preallocate", "yes"),
    ("segment.ms", "0"),
    ("flush.messages", "0"),
    ("delete.retention.ms", "-1"),
    ("max.compaction.lag.ms", "0"),
    ("unclean.leader.election.enable", "maybe"),
    ("no.such.config", "1"),
    ("internal.segment.bytes", "4096"),
]


def _outcome(future: object) -> tuple[str, str]:
    try:
        future.result(TIMEOUT_S)  # type: ignore[attr-defined]
    except KafkaException as e:
        return e.args[0].name(), e.args[0].str()
    return "NONE", ""


def _answers(bootstrap: str, topic: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    """Each case through each API: (api, key, value) -> (error name, message)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    found = {}
    for key, value in CASES:
        created = admin.create_topics([NewTopic(unique_topic("limits"), 1, 1, config={key: value})],
                                      validate_only=True, request_timeout=TIMEOUT_S)
        found[("CreateTopics", key, value)] = _outcome(next(iter(created.values())))
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
            ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])
        found[("IncrementalAlterConfigs", key, value)] = _outcome(
            admin.incremental_alter_configs([resource], validate_only=True)[resource])
        legacy = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config={key: value})
        found[("AlterConfigs", key, value)] = _outcome(admin.alter_configs([legacy], validate_only=True)[legacy])
    # Keys that must agree with each other.
    conflict = {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}
    created = admin.create_topics([NewTopic(unique_topic("limits"), 1, 1, config=conflict)], validate_only=True,
                                  request_timeout=TIMEOUT_S)
    found[("CreateTopics", "min>max compaction lag", "")] = _outcome(next(iter(created.values())))
    return found


@pytest.fixture(scope="module")
def kafka_answers(reference_kafka: BrokerProcess) -> dict[tuple[str, str, str], tuple[str, str]]:
    topic = unique_topic("limits-target")
    create_topic(reference_kafka.bootstrap, topic)
    return _answers(reference_kafka.bootstrap, topic)


def test_topic_configs_are_checked_as_kafka_checks_them(broker: BrokerProcess, kafka_answers: dict) -> None:
    topic = unique_topic("limits-target")
    create_topic(broker.bootstrap, topic)
    ours = _answers(broker.bootstrap, topic)
    assert ours[("CreateTopics", "segment.bytes", "100")] == (
        "INVALID_CONFIG", "Invalid value 100 for configuration segment.bytes: Value must be at least 1048576")
    differences = "\n".join(f"{case}:\n  pykafkad {ours[case]}\n  kafka    {kafka_answers[case]}"
                            for case in ours if ours[case] != kafka_answers[case])
    assert not differences, differences


def test_internal_segment_bytes_makes_small_segments(broker: BrokerProcess) -> None:
    """The test-only key rolls segments at its size (segment.bytes cannot go below 1 MiB)."""
    from compat_tests.clients import ConfluentClient, sample_records

    topic = unique_topic("internal-segments")
    create_topic(broker.bootstrap, topic, config={"internal.segment.bytes": "1024"})
    small_batches = {"linger.ms": 0, "batch.num.messages": 5}
    ConfluentClient(broker.bootstrap).produce(topic, sample_records(100, 1_700_000_000_000), **small_batches)
    segments = sorted(broker.partition_dir(topic).glob("*.log"))
    assert len(segments) > 2, segments
