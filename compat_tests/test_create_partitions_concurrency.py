"""CreatePartitions: off the event loop, and one change at a time per topic.

Adding thousands of partitions opens thousands of logs; other connections are served meanwhile.
Changes to one topic are applied one after the other, as Kafka's controller applies them: two
CreatePartitions on the same topic never add the same partition twice (the second is checked
against the count the first left), a DeleteTopics racing one removes every partition it added,
and a CreatePartitions sent while the topic is still being created sees the created topic.  Each
test checks the outcome on disk, in Metadata and after a restart.
"""

from __future__ import annotations

import re
import select
import time
import uuid
from typing import Any

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewPartitions

import wire
from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch

PRODUCE, METADATA, CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS = 0, 3, 19, 20, 37
CREATE_PARTITIONS_VERSION = 3
ERR_NONE = 0
ERR_UNKNOWN_TOPIC_OR_PARTITION = 3
ERR_LEADER_NOT_AVAILABLE = 5
ERR_INVALID_PARTITIONS = 37
ERR_INVALID_REPLICA_ASSIGNMENT = 39
ERR_INVALID_REQUEST = 42
ZERO_UUID = uuid.UUID(int=0)
# Long enough for thousands of partition logs on a slow, shared machine.
SLOW_REQUEST_S = 120.0


def _create_partitions(name: str, count: int, correlation_id: int, validate_only: bool = False,
                       assignments: list[list[int]] | None = None) -> bytes:
    body = {"topics": [{"name": name, "count": count,
                        "assignments": None if assignments is None else
                        [{"broker_ids": b} for b in assignments]}],
            "timeout_ms": 60000, "validate_only": validate_only}
    return wire.encode_request(CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, correlation_id, "cp-test", body)


def _answer(conn: RawConnection, api_key: int, version: int, correlation_id: int) -> dict[str, Any]:
    frame = conn.recv_frame()
    assert frame is not None, f"broker closed the connection instead of answering api {api_key}"
    got, body = wire.decode_response(api_key, version, frame)
    assert got == correlation_id
    return body


def _single_result(body: dict[str, Any]) -> tuple[int, str | None]:
    [result] = body["results"]
    return result["error_code"], result["error_message"]


def _metadata(conn: RawConnection, name: str) -> tuple[int, int]:
    """(error code, partition count) of ``name`` in a Metadata v12 answer."""
    answer = conn.request(METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
    [topic] = answer["topics"]
    return topic["error_code"], len(topic["partitions"])


def _partition_dirs(broker: BrokerProcess, name: str) -> set[int]:
    pattern = re.compile(rf"{re.escape(name)}-(\d+)")
    return {int(m.group(1)) for d in broker.log_dir.iterdir() if (m := pattern.fullmatch(d.name))}


def _produce_one(conn: RawConnection, name: str, partition: int, value: bytes) -> int:
    """The offset ``value`` was appended at in ``partition`` (the test fails on an error)."""
    answer = produce_partition_response(conn.request(PRODUCE, 9, produce_body(
        name, partition, record_batch([value], 1_000))))
    assert answer["error_code"] == ERR_NONE, answer
    return answer["base_offset"]


def _readable(conn: RawConnection) -> bool:
    return bool(select.select([conn.sock], [], [], 0)[0])


def _assert_consistent(broker: BrokerProcess, name: str, partitions: int) -> int:
    """Metadata and the log dir both hold exactly ``partitions`` partitions, and the last takes a record.

    Returns the offset that record got.
    """
    with RawConnection(broker.port) as conn:
        assert _metadata(conn, name) == (ERR_NONE, partitions)
        assert _partition_dirs(broker, name) == set(range(partitions))
        return _produce_one(conn, name, partitions - 1, b"last")


def test_adding_thousands_of_partitions_does_not_stall_other_connections(
        broker_factory: BrokerFactory) -> None:
    broker = broker_factory("wide-add")
    name = unique_topic("wide-add")
    served_meanwhile = 0
    with RawConnection(broker.port, timeout=SLOW_REQUEST_S) as adding, RawConnection(broker.port) as other:
        other.create_topic(name, 1)
        adding.send(_create_partitions(name, 3001, 9))
        while not _readable(adding):
            # The second partition's directory exists: the new logs are being opened.  A Metadata
            # answer that still shows one partition was served while they were.
            started = broker.partition_dir(name, 1).exists()
            error, count = _metadata(other, name)
            assert error == ERR_NONE
            if started and count == 1 and not _readable(adding):
                served_meanwhile += 1
        assert _single_result(_answer(adding, CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, 9)) == (ERR_NONE, None)
    assert served_meanwhile > 0, "no other request was answered while the partitions were being added"
    _assert_consistent(broker, name, 3001)


def test_two_concurrent_create_partitions_to_one_count_add_each_partition_once(
        broker_factory: BrokerFactory) -> None:
    broker = broker_factory("same-count")
    name = unique_topic("same-count")
    with RawConnection(broker.port, timeout=SLOW_REQUEST_S) as first, \
            RawConnection(broker.port, timeout=SLOW_REQUEST_S) as second:
        first.create_topic(name, 1)
        # Both are in the broker before either is answered.
        first.send(_create_partitions(name, 1000, 1))
        second.send(_create_partitions(name, 1000, 2))
        results = sorted([_single_result(_answer(first, CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, 1)),
                          _single_result(_answer(second, CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, 2))])
    # Kafka's message for the one applied second: it sees the count the first one left.
    assert results == [(ERR_NONE, None), (ERR_INVALID_PARTITIONS, "Topic already has 1000 partition(s).")]
    assert _assert_consistent(broker, name, 1000) == 0
    broker.restart()
    assert _assert_consistent(broker, name, 1000) == 1, "the record before the restart was lost"


def test_concurrent_admin_clients_growing_one_topic_end_at_the_larger_count(
        broker_factory: BrokerFactory) -> None:
    broker = broker_factory("admins")
    name = unique_topic("admins")
    with RawConnection(broker.port) as conn:
        conn.create_topic(name, 1)
    # Two AdminClients, two connections; both requests are sent before either result is read.
    admins = [AdminClient({"bootstrap.servers": broker.bootstrap}) for _ in range(2)]
    futures = [admin.create_partitions([NewPartitions(name, count)], request_timeout=SLOW_REQUEST_S,
                                       operation_timeout=SLOW_REQUEST_S)[name]
               for admin, count in zip(admins, (600, 1200), strict=True)]
    futures[1].result(timeout=SLOW_REQUEST_S)
    try:
        futures[0].result(timeout=SLOW_REQUEST_S)
    except confluent_kafka.KafkaException as e:
        # Applied after the larger one: refused against the count that one left, as Kafka does.
        assert e.args[0].code() == confluent_kafka.KafkaError.INVALID_PARTITIONS, e
        assert "currently has 1200 partition(s); 600 would not be an increase" in e.args[0].str(), e
    del futures, admins  # no client left to reconnect (and log about it) while the broker restarts
    _assert_consistent(broker, name, 1200)
    broker.restart()
    _assert_consistent(broker, name, 1200)


def test_delete_topics_racing_create_partitions_leaves_no_partition_behind(
        broker_factory: BrokerFactory) -> None:
    broker = broker_factory("delete-race")
    name = unique_topic("delete-race")
    with RawConnection(broker.port, timeout=SLOW_REQUEST_S) as adding, \
            RawConnection(broker.port, timeout=SLOW_REQUEST_S) as deleting:
        deleting.create_topic(name, 1)
        adding.send(_create_partitions(name, 2000, 1))
        while not broker.partition_dir(name, 1).exists() and not _readable(adding):
            time.sleep(0.002)  # leave the cores to the broker while waiting
        deleted = deleting.request(DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": ZERO_UUID}],
                                                      "timeout_ms": 60000})
        added = _single_result(_answer(adding, CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, 1))
    # The CreatePartitions was under way first, so it is applied first; the delete then removes
    # the topic with every partition it added.
    assert added == (ERR_NONE, None)
    assert deleted["responses"][0]["error_code"] == ERR_NONE, deleted
    for attempt in ("before", "after"):
        with RawConnection(broker.port) as conn:
            assert _metadata(conn, name)[0] == ERR_UNKNOWN_TOPIC_OR_PARTITION, f"{attempt} the restart"
        assert _partition_dirs(broker, name) == set(), f"{attempt} the restart"
        if attempt == "before":
            broker.restart()
    with RawConnection(broker.port) as conn:
        conn.create_topic(name, 2)
        assert _produce_one(conn, name, 1, b"fresh") == 0, "the recreated topic found an old log"
    _assert_consistent(broker, name, 2)


def test_create_partitions_sent_while_the_topic_is_being_created_sees_the_topic(
        broker_factory: BrokerFactory) -> None:
    broker = broker_factory("while-created")
    name = unique_topic("while-created")
    with RawConnection(broker.port, timeout=SLOW_REQUEST_S) as creating, \
            RawConnection(broker.port, timeout=SLOW_REQUEST_S) as adding:
        creating.send(wire.encode_request(CREATE_TOPICS, 7, 1, "cp-test", {
            "topics": [{"name": name, "num_partitions": 2000, "replication_factor": 1}], "timeout_ms": 60000}))
        # Sent once the broker has taken the CreateTopics: while it runs (LEADER_NOT_AVAILABLE) or after.
        while _metadata(adding, name)[0] == ERR_UNKNOWN_TOPIC_OR_PARTITION:
            pass
        added = adding.request(CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, {
            "topics": [{"name": name, "count": 2001, "assignments": None}], "timeout_ms": 60000,
            "validate_only": False})
        created = _answer(creating, CREATE_TOPICS, 7, 1)
    assert created["topics"][0]["error_code"] == ERR_NONE
    assert _single_result(added) == (ERR_NONE, None)
    _assert_consistent(broker, name, 2001)
    broker.restart()
    _assert_consistent(broker, name, 2001)


def test_create_partitions_errors_and_validate_only_open_nothing(broker: BrokerProcess) -> None:
    name, missing = unique_topic("cp-edges"), unique_topic("cp-missing")
    with RawConnection(broker.port) as conn:
        conn.create_topic(name, 2)

        def result(count: int, validate_only: bool = False,
                   assignments: list[list[int]] | None = None) -> tuple[int, str | None]:
            cid = conn.correlation_id()
            conn.send(_create_partitions(name, count, cid, validate_only, assignments))
            return _single_result(_answer(conn, CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, cid))

        assert result(50, validate_only=True) == (ERR_NONE, None)
        assert result(2) == (ERR_INVALID_PARTITIONS, "Topic already has 2 partition(s).")
        assert result(1) == (ERR_INVALID_PARTITIONS,
                             f"The topic {name} currently has 2 partition(s); 1 would not be an increase.")
        assert result(1, validate_only=True)[0] == ERR_INVALID_PARTITIONS
        assert result(5, assignments=[[1]]) == (
            ERR_INVALID_REPLICA_ASSIGNMENT,
            "Attempted to add 3 additional partition(s), but only 1 assignment(s) were specified.")
        # Kafka answers each topic named more than once in one request once, with INVALID_REQUEST,
        # and applies none of its entries.
        both = conn.request(CREATE_PARTITIONS, CREATE_PARTITIONS_VERSION, {
            "topics": [{"name": n, "count": c, "assignments": None}
                       for n, c in ((name, 3), (missing, 2), (name, 4))],
            "timeout_ms": 60000, "validate_only": False})
        by_name = {r["name"]: r for r in both["results"]}
        assert len(both["results"]) == 2
        assert (by_name[name]["error_code"], by_name[name]["error_message"]) == (
            ERR_INVALID_REQUEST, "Duplicate topic name.")
        assert by_name[missing]["error_code"] == ERR_UNKNOWN_TOPIC_OR_PARTITION
        assert _metadata(conn, name) == (ERR_NONE, 2)
    assert _partition_dirs(broker, name) == {0, 1}, "validate_only or a refused request opened a log"
