"""A topic deleted in a DeleteTopics request that also names an unknown topic, then asked for with
Metadata v1 on the same connection, answered as Apache Kafka 4.4.0 answers it.

Kafka deletes the real topic (the unknown name gets UNKNOWN_TOPIC_OR_PARTITION on its own and
aborts nothing).  Metadata v1 has no allow_auto_topic_creation field, so with
auto.create.topics.enable (Kafka's default) the request auto-creates the topic again; but Kafka
only asks its controller to create it and answers this request without it: UNKNOWN_TOPIC_OR_PARTITION,
no partitions.  A later Metadata shows the new, empty topic.  Before, pykafkad created the topic
before answering and returned its partition at once, so the deleted topic looked still listed.
Each step goes to pykafkad and to a real Kafka broker, and the answers must match.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch

METADATA, DELETE_TOPICS, LIST_OFFSETS, PRODUCE = 3, 20, 2, 0
RECREATE_TIMEOUT_S = 30.0


def _metadata_v1(conn: RawConnection, topic: str) -> tuple[int, bool, int]:
    """(error code, is_internal, partition count) of ``topic`` in a Metadata v1 answer."""
    [entry] = conn.request(METADATA, 1, {"topics": [{"name": topic}]})["topics"]
    assert entry["name"] == topic
    return entry["error_code"], entry["is_internal"], len(entry["partitions"])


def _log_end(conn: RawConnection, topic: str) -> int:
    listed = conn.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    part = listed["topics"][0]["partitions"][0]
    assert part["error_code"] == 0, part
    return int(part["offset"])


def _delete_then_ask(port: int) -> dict[str, Any]:
    """What one broker answers, step by step, on one connection."""
    topic, unknown = unique_topic("deleted-listed"), unique_topic("never-created")
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
        written = conn.request(PRODUCE, 9, produce_body(topic, 0, record_batch([b"a", b"b", b"c"],
                                                                               int(time.time() * 1000))))
        assert produce_partition_response(written)["error_code"] == 0, written
        assert _log_end(conn, topic) == 3
        deleted = conn.request(DELETE_TOPICS, 1, {"topic_names": [unknown, topic], "timeout_ms": 30000})
        seen["delete"] = {r["name"]: r["error_code"] for r in deleted["responses"]}
        seen["metadata right after"] = _metadata_v1(conn, topic)
        # Metadata v1 auto-creates: the topic comes back, new and empty.
        deadline = time.monotonic() + RECREATE_TIMEOUT_S
        while (again := _metadata_v1(conn, topic))[0] != 0:
            assert time.monotonic() < deadline, f"{topic} not auto-created again: {again}"
            time.sleep(0.05)
        seen["metadata later"] = again
        conn.wait_for_leader(topic)
        seen["log end of the new topic"] = _log_end(conn, topic)
        seen["unknown name"] = unknown
        seen["topic"] = topic
    return seen


def _comparable(seen: dict[str, Any]) -> dict[str, Any]:
    """The answers with the random names replaced by their roles."""
    roles = {seen["topic"]: "topic", seen["unknown name"]: "unknown"}
    out = {k: v for k, v in seen.items() if k not in ("topic", "unknown name")}
    out["delete"] = {roles[name]: code for name, code in seen["delete"].items()}
    return out


@pytest.mark.compat_timeout(150)
def test_deleted_topic_is_not_listed_as_on_kafka(broker_factory: BrokerFactory,
                                                 reference_kafka: BrokerProcess) -> None:
    # Kafka's default; the shared test broker turns it off.
    ours_broker = broker_factory("autocreate", {"auto.create.topics.enable": "true"})
    ours, theirs = _comparable(_delete_then_ask(ours_broker.port)), _comparable(_delete_then_ask(reference_kafka.port))
    assert ours == theirs, f"pykafkad {ours}\nkafka    {theirs}"
    assert ours == {
        "delete": {"unknown": 3, "topic": 0},
        "metadata right after": (3, False, 0),
        "metadata later": (0, False, 1),
        "log end of the new topic": 0,
    }
