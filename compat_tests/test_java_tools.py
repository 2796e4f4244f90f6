"""Apache Kafka 4.4.0's own command-line tools against pykafkad: kafka-topics
(create/list/describe/alter --partitions/delete), kafka-console-producer and
kafka-console-consumer (by partition, no group), kafka-get-offsets and
kafka-broker-api-versions.  The tools run from the jars of `make java-deps` (env JAVA_LIB)."""

from __future__ import annotations

import re
import time

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, KafkaPythonClient, Rec, create_topic, now_ms, unique_topic
from compat_tests.java_tools import run_tool


def topics(broker: BrokerProcess, *args: str) -> str:
    return run_tool("kafka-topics", ["--bootstrap-server", broker.bootstrap, *args]).stdout


def partition_count(describe_output: str) -> int:
    m = re.search(r"PartitionCount:\s*(\d+)", describe_output)
    assert m, f"no PartitionCount in:\n{describe_output}"
    return int(m.group(1))


def test_kafka_topics_lifecycle(broker: BrokerProcess) -> None:
    topic = unique_topic("jtopics")
    out = topics(
        broker,
        "--create",
        "--topic",
        topic,
        "--partitions",
        "2",
        "--replication-factor",
        "1",
        "--config",
        "retention.ms=3600000",
    )
    assert f"Created topic {topic}." in out

    assert topic in topics(broker, "--list").split()

    described = topics(broker, "--describe", "--topic", topic)
    assert partition_count(described) == 2
    assert re.search(r"ReplicationFactor:\s*1", described), described
    assert "retention.ms=3600000" in described
    rows = re.findall(r"Partition:\s*(\d+)\s+Leader:\s*(\d+)\s+Replicas:\s*(\d+)\s+Isr:\s*(\d+)", described)
    assert sorted(rows) == [("0", "1", "1", "1"), ("1", "1", "1", "1")], described

    topics(broker, "--alter", "--topic", topic, "--partitions", "4")
    assert partition_count(topics(broker, "--describe", "--topic", topic)) == 4

    # Creating it again fails with the tool's own error message.
    again = run_tool(
        "kafka-topics", ["--bootstrap-server", broker.bootstrap, "--create", "--topic", topic], check=False
    )
    assert again.returncode != 0 and "already exists" in (again.stdout + again.stderr)

    topics(broker, "--delete", "--topic", topic)
    deadline = time.monotonic() + 30
    while topic in topics(broker, "--list").split() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert topic not in topics(broker, "--list").split()


def test_kafka_topics_describe_unknown_topic_fails(broker: BrokerProcess) -> None:
    result = run_tool(
        "kafka-topics",
        ["--bootstrap-server", broker.bootstrap, "--describe", "--topic", unique_topic("nope")],
        check=False,
    )
    assert result.returncode != 0
    assert "does not exist" in result.stdout + result.stderr


def test_console_producer_then_console_consumer(broker: BrokerProcess) -> None:
    topic = unique_topic("jconsole")
    create_topic(broker.bootstrap, topic)
    lines = [f"key-{i}:value-{i}" for i in range(20)]
    run_tool(
        "kafka-console-producer",
        [
            "--bootstrap-server",
            broker.bootstrap,
            "--topic",
            topic,
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "key.separator=:",
        ],
        stdin="\n".join(lines) + "\n",
    )
    out = run_tool(
        "kafka-console-consumer",
        [
            "--bootstrap-server",
            broker.bootstrap,
            "--topic",
            topic,
            "--partition",
            "0",
            "--offset",
            "earliest",
            "--max-messages",
            "20",
            "--timeout-ms",
            "30000",
            "--formatter-property",
            "print.key=true",
            "--formatter-property",
            "key.separator=:",
            "--formatter-property",
            "print.offset=true",
        ],
    ).stdout
    got = [line for line in out.splitlines() if line.strip()]
    assert got == [f"Offset:{i}:key-{i}:value-{i}" for i in range(20)], out
    # The Java producer is idempotent by default: no duplicates, offsets 0..19 exactly.
    assert ConfluentClient(broker.bootstrap).offsets(topic, 0) == (0, 20)


def test_console_consumer_from_beginning_reads_python_records(broker: BrokerProcess) -> None:
    topic = unique_topic("jconsume")
    create_topic(broker.bootstrap, topic)
    ConfluentClient(broker.bootstrap).produce(
        topic, [Rec(f"py-{i}".encode(), None) for i in range(7)], compression="zstd"
    )
    out = run_tool(
        "kafka-console-consumer",
        [
            "--bootstrap-server",
            broker.bootstrap,
            "--topic",
            topic,
            "--partition",
            "0",
            "--from-beginning",
            "--max-messages",
            "7",
            "--timeout-ms",
            "30000",
        ],
    ).stdout
    assert out.split() == [f"py-{i}" for i in range(7)]


def test_get_offsets(broker: BrokerProcess) -> None:
    topic = unique_topic("jgetoffsets")
    create_topic(broker.bootstrap, topic, partitions=2)
    base = now_ms() - 100_000
    ck = ConfluentClient(broker.bootstrap)
    ck.produce(topic, [Rec(b"a", None, timestamp=base + i * 10, partition=0) for i in range(6)])
    ck.produce(topic, [Rec(b"b", None, timestamp=base, partition=1) for _ in range(3)])

    def get_offsets(*extra: str) -> set[str]:
        out = run_tool(
            "kafka-get-offsets", ["--bootstrap-server", broker.bootstrap, "--topic", topic, *extra]
        )
        return {line.strip() for line in out.stdout.splitlines() if line.strip()}

    assert get_offsets() == {f"{topic}:0:6", f"{topic}:1:3"}
    assert get_offsets("--time", "latest") == {f"{topic}:0:6", f"{topic}:1:3"}
    assert get_offsets("--time", "earliest") == {f"{topic}:0:0", f"{topic}:1:0"}
    assert get_offsets("--time", str(base + 25), "--partitions", "0") == {f"{topic}:0:3"}
    assert get_offsets("--time", "max-timestamp", "--partitions", "0") == {f"{topic}:0:5"}


def test_broker_api_versions(broker: BrokerProcess) -> None:
    out = run_tool("kafka-broker-api-versions", ["--bootstrap-server", broker.bootstrap]).stdout
    assert f"127.0.0.1:{broker.port} (id: 1" in out, out
    for name, key in (
        ("Produce", 0),
        ("Fetch", 1),
        ("ListOffsets", 2),
        ("Metadata", 3),
        ("ApiVersions", 18),
        ("CreateTopics", 19),
    ):
        m = re.search(rf"\b{name}\({key}\): (\d+) to (\d+) \[usable: (\d+)\]", out)
        assert m, f"{name}({key}) not listed as usable:\n{out}"


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_console_producer_compressed(broker: BrokerProcess, codec: str) -> None:
    """Java's snappy is the xerial framing; the other clients must read it back."""
    topic = unique_topic(f"jcodec-{codec}")
    create_topic(broker.bootstrap, topic)
    run_tool(
        "kafka-console-producer",
        ["--bootstrap-server", broker.bootstrap, "--topic", topic, "--compression-codec", codec],
        stdin="".join(f"{codec}-{i}\n" for i in range(10)),
    )
    expected = [f"{codec}-{i}".encode() for i in range(10)]
    for client_cls in (ConfluentClient, KafkaPythonClient):
        got = client_cls(broker.bootstrap).consume(topic, 0, "earliest", count=10)
        assert [g.value for g in got] == expected, client_cls.name
