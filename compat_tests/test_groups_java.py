"""Kafka's own Java tools against groups: kafka-console-consumer --group and kafka-consumer-groups.

The console consumer with ``--group`` consumes part of a topic, stops, and a second run resumes
where the first stopped.  kafka-consumer-groups then lists the group, describes it (positions,
log-end offsets, lag), resets its offsets to the earliest, and deletes it.  Kafka's
OffsetsMessageFormatter and GroupMetadataMessageFormatter decode the records the broker wrote
to ``__consumer_offsets``.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition

from compat_tests.clients import create_topic, unique_topic
from compat_tests.groups_support import GROUP_BROKER_OVERRIDES, produce_spread
from compat_tests.java_tools import run_tool
from pykafkad.coordinator.group.offsets_store import partition_for

PARTITIONS = 2


def _console_consume(bootstrap: str, topic: str, group: str, count: int) -> list[str]:
    result = run_tool("kafka-console-consumer", [
        "--bootstrap-server", bootstrap, "--topic", topic, "--group", group, "--from-beginning",
        "--max-messages", str(count), "--timeout-ms", "30000",
        "--command-property", "session.timeout.ms=6000",
    ])
    return result.stdout.split()


def _end_offset(bootstrap: str, topic: str, partition: int) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "offsets-probe", "enable.auto.commit": False})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=15)[1]
    finally:
        c.close()


def _describe_rows(bootstrap: str, group: str) -> dict[int, list[str]]:
    out = run_tool("kafka-consumer-groups", ["--bootstrap-server", bootstrap, "--describe", "--group", group]).stdout
    rows = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[0] == group:
            rows[int(cols[2])] = cols
    return rows


@pytest.mark.compat_timeout(170)
def test_console_consumer_group_resumes_and_consumer_groups_tool(broker_factory) -> None:
    broker = broker_factory("groups-java", GROUP_BROKER_OVERRIDES)
    topic, group = unique_topic("grp-java"), unique_topic("g-java")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce_spread(broker.bootstrap, topic, 20, PARTITIONS, "v")
    values = {f"v-{i}" for i in range(20)}

    # The console consumer commits what it consumed when it exits; the next run resumes after it.
    first = _console_consume(broker.bootstrap, topic, group, 12)
    assert len(first) == 12 and set(first) <= values
    second = _console_consume(broker.bootstrap, topic, group, 8)
    assert sorted(first + second) == sorted(values)

    listed = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--list"]).stdout.split()
    assert group in listed

    rows = _describe_rows(broker.bootstrap, group)
    # GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
    assert sorted(rows) == list(range(PARTITIONS))
    for cols in rows.values():
        assert cols[1] == topic and cols[3] == "10" and cols[4] == "10" and cols[5] == "0", cols

    reset = run_tool("kafka-consumer-groups", [
        "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--to-earliest", "--execute",
        "--group", group, "--topic", topic]).stdout
    assert group in reset
    rows = _describe_rows(broker.bootstrap, group)
    for cols in rows.values():
        assert cols[3] == "0" and cols[5] == "10", cols

    # After the reset a consumer of the group reads from the start again.
    again = _console_consume(broker.bootstrap, topic, group, 20)
    assert sorted(again) == sorted(values)

    # Kafka's own formatters read the group's records in __consumer_offsets (Kafka's key/value schemas).
    # Each run stops once it has read the partition up to its end offset (or after 5 s without a record).
    partition = partition_for(group, 50)
    records = _end_offset(broker.bootstrap, "__consumer_offsets", partition)
    for formatter, expected in (("OffsetsMessageFormatter", f'"topic":"{topic}"'),
                                ("GroupMetadataMessageFormatter", '"protocolType":"consumer"')):
        out = run_tool("kafka-console-consumer", [
            "--bootstrap-server", broker.bootstrap, "--topic", "__consumer_offsets", "--partition", str(partition),
            "--offset", "earliest", "--max-messages", str(records), "--timeout-ms", "5000",
            "--formatter", f"org.apache.kafka.tools.consumer.{formatter}"], check=False).stdout
        assert f'"group":"{group}"' in out and expected in out, (formatter, out[-2000:])

    deleted = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--delete",
                                                 "--group", group]).stdout
    assert "successful" in deleted.lower(), deleted
    listed = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--list"]).stdout.split()
    assert group not in listed
