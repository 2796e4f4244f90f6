"""DescribeTopicPartitions (75, KIP-966) and ListConfigResources (74, KIP-1142): Kafka 4's paged topic
description, as ``kafka-topics.sh --describe`` uses it, and the list of config resources."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST = 3, 42


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path_factory.mktemp("listing") / "logs", name="listing")
    process.start()
    yield process
    process.close()


def test_pages_follow_the_cursor(broker: BrokerProcess) -> None:
    prefix = f"dtp-{uuid.uuid4().hex[:6]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(f"{prefix}-a", partitions=3)
        conn.create_topic(f"{prefix}-b", partitions=2)
        seen: list[tuple[str, int]] = []
        cursor = None
        pages = 0
        while True:
            answer = conn.request(75, 0, {"topics": [{"name": f"{prefix}-b"}, {"name": f"{prefix}-a"}],
                                          "response_partition_limit": 2, "cursor": cursor})
            pages += 1
            for topic in answer["topics"]:
                assert topic["error_code"] == 0 and topic["topic_id"] != uuid.UUID(int=0)
                seen += [(topic["name"], p["partition_index"]) for p in topic["partitions"]]
                assert all(p["leader_id"] == 1 and p["isr_nodes"] == [1] for p in topic["partitions"])
            cursor = answer["next_cursor"]
            if cursor is None:
                break
        assert seen == [(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-a", 2), (f"{prefix}-b", 0),
                        (f"{prefix}-b", 1)]
        assert pages == 3
        missing = conn.request(75, 0, {"topics": [{"name": f"{prefix}-none"}], "response_partition_limit": 10})
        assert missing["topics"][0]["error_code"] == UNKNOWN_TOPIC_OR_PARTITION
        stray = conn.request(75, 0, {"topics": [{"name": f"{prefix}-a"}], "response_partition_limit": 10,
                                     "cursor": {"topic_name": f"{prefix}-b", "partition_index": 0}})
        assert stray["topics"][0]["error_code"] == INVALID_REQUEST
        every = conn.request(75, 0, {"topics": [], "response_partition_limit": 2000})
        assert {f"{prefix}-a", f"{prefix}-b"} <= {t["name"] for t in every["topics"]}


def test_kafka_topics_describe_pages_through_all_partitions(broker: BrokerProcess, tmp_path: Path) -> None:
    topic = f"dtp-tool-{uuid.uuid4().hex[:6]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(topic, partitions=5)
    out = run_tool("kafka-topics", ["--bootstrap-server", broker.bootstrap, "--describe", "--topic", topic,
                                    "--partition-size-limit-per-response", "2"]).stdout
    assert [line.split("Partition: ")[1].split()[0] for line in out.splitlines() if "Partition: " in line] == \
        ["0", "1", "2", "3", "4"]


def test_list_config_resources(broker: BrokerProcess) -> None:
    topic = f"lcr-{uuid.uuid4().hex[:6]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(topic)
        answer = conn.request(74, 1, {"resource_types": []})
        assert answer["error_code"] == 0
        resources = {(r["resource_type"], r["resource_name"]) for r in answer["config_resources"]}
        assert (2, topic) in resources and (4, "1") in resources and (8, "1") in resources
        only_topics = conn.request(74, 1, {"resource_types": [2]})
        assert {r["resource_type"] for r in only_topics["config_resources"]} == {2}
        assert conn.request(74, 0, {})["config_resources"] == []  # v0: client-metrics subscriptions, none here
        assert conn.request(74, 1, {"resource_types": [99]})["error_code"] != 0
