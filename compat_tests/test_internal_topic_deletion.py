"""Deleting ``__consumer_offsets`` and ``__transaction_state``, answered as Apache Kafka 4.4.0 answers it.

Kafka 4 (KRaft) has no rule against it: DeleteTopics deletes both internal topics (error NONE;
`kafka-topics.sh --delete` succeeds the same way), the groups' committed offsets go with them,
and the coordinators create the topics again on next use (FindCoordinator, or a Metadata request
that auto-creates).  Each step goes to pykafkad and to a real Kafka broker, and the answers must
match.  A Metadata v1 request for a deleted internal topic auto-creates it: before, pykafkad
created it with num.partitions (1) and answered with it at once; Kafka answers the creating
request without it (is_internal set) and then shows it with the coordinator's 50 partitions.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import REFERENCE_KAFKA_MODULE, BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, DELETE_TOPICS = 3, 8, 9, 10, 20
GROUP_KEY, TRANSACTION_KEY = 0, 1
INTERNAL = ("__consumer_offsets", "__transaction_state")
TIMEOUT_S = 60.0


def _until(what: str, probe: Any) -> Any:
    """Poll ``probe`` until it returns something other than None."""
    deadline = time.monotonic() + TIMEOUT_S
    while (got := probe()) is None:
        assert time.monotonic() < deadline, f"{what} not within {TIMEOUT_S} s"
        time.sleep(0.05)
    return got


def _find_coordinators(conn: RawConnection) -> None:
    """FindCoordinator for a group and a transactional id, until both answer (creating both topics)."""
    for key_type in (GROUP_KEY, TRANSACTION_KEY):
        def found(key_type: int = key_type) -> bool | None:
            answer = conn.request(FIND_COORDINATOR, 4, {"key_type": key_type, "coordinator_keys": ["k"]})
            return True if answer["coordinators"][0]["error_code"] == 0 else None
        _until(f"coordinator of key type {key_type}", found)


def _commit(conn: RawConnection, group: str, topic: str, offset: int) -> None:
    def committed() -> bool | None:
        answer = conn.request(OFFSET_COMMIT, 2, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -1,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                       "committed_metadata": ""}]}]})
        return True if answer["topics"][0]["partitions"][0]["error_code"] == 0 else None
    _until(f"commit of {group}", committed)


def _committed(conn: RawConnection, group: str, topic: str) -> int:
    """The group's committed offset of partition 0, once the coordinator answers without error."""
    def fetched() -> int | None:
        answer = conn.request(OFFSET_FETCH, 3, {"group_id": group,
                                                "topics": [{"name": topic, "partition_indexes": [0]}]})
        if answer["error_code"] != 0:  # the coordinator is still loading or being elected
            return None
        part = answer["topics"][0]["partitions"][0]
        return part["committed_offset"] if part["error_code"] == 0 else None
    return int(_until(f"offsets of {group}", fetched))


def _internal_topics(conn: RawConnection) -> dict[str, int]:
    """Internal topic -> partition count, from a Metadata request for all topics."""
    answer = conn.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False})
    return {t["name"]: len(t["partitions"]) for t in answer["topics"] if t["name"] in INTERNAL}


def _metadata_v1(conn: RawConnection, topic: str) -> tuple[int, bool, int]:
    [entry] = conn.request(METADATA, 1, {"topics": [{"name": topic}]})["topics"]
    return entry["error_code"], entry["is_internal"], len(entry["partitions"])


def _delete_internal_topics(port: int) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    topic, group = unique_topic("internal-deletion"), f"group-{uuid.uuid4().hex[:8]}"
    with RawConnection(port) as conn:
        _find_coordinators(conn)
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
        _commit(conn, group, topic, 7)
        seen["committed before"] = _committed(conn, group, topic)
        seen["internal topics before"] = _internal_topics(conn)
        deleted = conn.request(DELETE_TOPICS, 6, {
            "topics": [{"name": name, "topic_id": uuid.UUID(int=0)} for name in INTERNAL], "timeout_ms": 30000})
        seen["delete"] = {r["name"]: (r["error_code"], r["error_message"]) for r in deleted["responses"]}
        seen["internal topics after"] = _until("the deletion in Metadata",
                                               lambda: None if _internal_topics(conn) else {})
        # Metadata v1 always auto-creates; the creating request is answered without the topic.
        seen["metadata v1 right after"] = _metadata_v1(conn, "__transaction_state")
        seen["metadata v1 later"] = _until(
            "__transaction_state again", lambda: m if (m := _metadata_v1(conn, "__transaction_state"))[0] == 0
            else None)
        _find_coordinators(conn)
        seen["internal topics recreated"] = _internal_topics(conn)
        seen["committed after"] = _committed(conn, group, topic)
        # Kafka's own tool does not refuse it either.
        deleted_by_tool = run_tool("kafka-topics", ["--bootstrap-server", f"127.0.0.1:{port}", "--delete",
                                                    "--topic", "__consumer_offsets"], check=False)
        seen["kafka-topics.sh --delete"] = (deleted_by_tool.returncode, deleted_by_tool.stderr.strip())
        seen["internal topics after the tool"] = _until(
            "the tool's deletion in Metadata",
            lambda: None if "__consumer_offsets" in (t := _internal_topics(conn)) else t)
    return seen


@pytest.mark.compat_timeout(240)
def test_deleting_internal_topics_as_on_kafka(broker_factory: BrokerFactory, tmp_path: Path) -> None:
    # Brokers of their own (the shared ones' groups keep their offsets).  Metadata v1 auto-creates
    # on both, as Kafka's default.
    ours_broker = broker_factory("internal-deletion", {"auto.create.topics.enable": "true"})
    kafka = BrokerProcess(tmp_path / "reference-kafka" / "logs", {"num.partitions": "1"},
                          name="reference-kafka-internal-deletion", module=REFERENCE_KAFKA_MODULE)
    try:
        kafka.start()
        theirs = _delete_internal_topics(kafka.port)
    finally:
        kafka.close()
    ours = _delete_internal_topics(ours_broker.port)
    assert ours == theirs, f"pykafkad {ours}\nkafka    {theirs}"
    assert ours == {
        "committed before": 7,
        "internal topics before": {"__consumer_offsets": 50, "__transaction_state": 50},
        "delete": {"__consumer_offsets": (0, None), "__transaction_state": (0, None)},
        "internal topics after": {},
        "metadata v1 right after": (3, True, 0),
        "metadata v1 later": (0, True, 50),
        "internal topics recreated": {"__consumer_offsets": 50, "__transaction_state": 50},
        "committed after": -1,
        "kafka-topics.sh --delete": (0, ""),
        "internal topics after the tool": {"__transaction_state": 50},
    }
