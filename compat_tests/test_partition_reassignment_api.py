"""AlterPartitionReassignments and ListPartitionReassignments answered as Kafka answers them, on one
broker: the refusals with Kafka's codes and messages, a cancellation with nothing to cancel, a
reassignment to the replicas a partition already has, and the listings.  Moving replicas between
brokers is proven in ``cluster_tests/test_reassignment.py``."""

from __future__ import annotations

import uuid
from typing import Any

from compat_tests.broker_process import BrokerProcess
from compat_tests.raw_kafka import RawConnection

ALTER, LIST, METADATA, CREATE_TOPICS = 45, 46, 3, 19
NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT = 0, 3, 38, 39
NO_REASSIGNMENT_IN_PROGRESS = 85


def _alter(conn: RawConnection, topic: str, partitions: dict[int, list[int] | None], version: int = 1,
           allow_rf_change: bool = True) -> dict[int, tuple[int, str | None]]:
    body: dict[str, Any] = {"timeout_ms": 10000, "allow_replication_factor_change": allow_rf_change,
                            "topics": [{"name": topic, "partitions": [
                                {"partition_index": p, "replicas": r} for p, r in partitions.items()]}]}
    response = conn.request(ALTER, version, body)
    assert response["error_code"] == NONE
    [answer] = response["responses"]
    assert answer["name"] == topic
    return {p["partition_index"]: (p["error_code"], p["error_message"]) for p in answer["partitions"]}


def _setup(conn: RawConnection) -> tuple[str, int]:
    """A new one-partition topic, and this broker's id."""
    node_id = conn.request(METADATA, 12, {"topics": []})["brokers"][0]["node_id"]
    topic = f"reassign-{uuid.uuid4().hex[:8]}"
    created = conn.request(CREATE_TOPICS, 5, {"timeout_ms": 10000, "validate_only": False, "topics": [
        {"name": topic, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}]})
    assert created["topics"][0]["error_code"] == NONE, created
    return topic, node_id


def test_refusals_carry_kafkas_codes_and_messages(broker: BrokerProcess) -> None:
    with RawConnection(broker.port) as conn:
        topic, me = _setup(conn)
        assert _alter(conn, "no-such-topic", {0: [me]}) == {
            0: (UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named no-such-topic.")}
        assert _alter(conn, topic, {7: [me]}) == {
            7: (UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:7.")}
        assert _alter(conn, topic, {0: []}) == {
            0: (INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")}
        assert _alter(conn, topic, {0: [me, 999]}) == {
            0: (INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes broker 999, but no such broker is registered.")}
        assert _alter(conn, topic, {0: [me, me]}) == {
            0: (INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes the broker {me} more than once.")}
        # Nothing is under way: nothing to cancel (Kafka leaves the message out).
        assert _alter(conn, topic, {0: None}) == {0: (NO_REASSIGNMENT_IN_PROGRESS, None)}
        assert _alter(conn, topic, {0: None}, version=0) == {0: (NO_REASSIGNMENT_IN_PROGRESS, None)}


def test_reassigning_to_the_same_replicas_completes_at_once(broker: BrokerProcess) -> None:
    with RawConnection(broker.port) as conn:
        topic, me = _setup(conn)
        assert _alter(conn, topic, {0: [me]}, allow_rf_change=False) == {0: (NONE, None)}
        listed = conn.request(LIST, 0, {"timeout_ms": 10000, "topics": None})
        assert listed["error_code"] == NONE
        assert all(t["name"] != topic for t in listed["topics"]), listed
        listed = conn.request(LIST, 0, {"timeout_ms": 10000, "topics": [
            {"name": topic, "partition_indexes": [0, 5]}, {"name": "no-such-topic", "partition_indexes": [0]}]})
        assert (listed["error_code"], listed["topics"]) == (NONE, [])
        [partition] = conn.request(METADATA, 12, {"topics": [{"name": topic}]})["topics"][0][
            "partitions"]
        assert (partition["leader_id"], partition["replica_nodes"], partition["isr_nodes"]) == (me, [me], [me])
