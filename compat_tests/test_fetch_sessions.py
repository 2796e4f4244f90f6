"""Fetch sessions (KIP-227) as Kafka's FetchManager answers them, for every kind of session id and epoch.

Kafka reads a Fetch request's (session id, session epoch) so: epoch 0 opens a new session and epoch
-1 (FINAL_EPOCH) asks for none; both are full fetches answered with the partitions asked for, and a
non-zero session id beside them only names a session to close.  Any other epoch is an incremental
fetch on the session named; one the broker does not have gets FETCH_SESSION_ID_NOT_FOUND and no
topics.  segmentio/kafka-go's Client.Fetch sends (-1, -1); pykafkad answered it
FETCH_SESSION_ID_NOT_FOUND with no topics, so the client reported "topic not found".

Each combination goes to pykafkad and to a real Kafka 4.4.0 on the same connection after a
produce, and the top-level error, the partitions answered and their records must match; both open a
session exactly where asked to (epoch 0).  Then one session through its life, side by side: a full
fetch opens it, incremental fetches are answered only the partitions with news (records or moved
watermarks), a stale epoch is refused, a forgotten partition is no longer answered, and a closed
session is gone.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.raw_kafka import RawConnection, batches_in, produce_body, produce_partition_response, record_batch

FETCH_SESSION_ID_NOT_FOUND = 70
UNKNOWN_SESSION = 0x5E55  # a session id no broker has handed out to this test

# (session id, session epoch) -> what Kafka does with it
CASES = {
    (0, 0): "new full session",
    (0, -1): "sessionless full fetch",
    (-1, -1): "sessionless full fetch (kafka-go)",
    (UNKNOWN_SESSION, -1): "close a session, full fetch without one",
    (UNKNOWN_SESSION, 0): "close a session, new full session",
    (UNKNOWN_SESSION, 1): "incremental on an unknown session",
    (UNKNOWN_SESSION, 7): "incremental on an unknown session, later epoch",
    (0, 1): "incremental on session 0",
    (-1, 3): "incremental on session -1",
    (UNKNOWN_SESSION, -2): "negative epoch other than FINAL_EPOCH",
}


def _fetch(conn: RawConnection, version: int, topic: str, session_id: int, epoch: int) -> dict[str, Any]:
    return conn.request(1, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": session_id, "session_epoch": epoch, "rack_id": "",
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                     "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": []})


def _summary(response: dict[str, Any]) -> tuple[int, list[tuple[str, int, int, list[tuple[int, int]]]]]:
    """(error, [(topic, partition, error, [(base offset, count) of each batch])])."""
    return response["error_code"], [
        (t["topic"], p["partition_index"], p["error_code"], batches_in(p["records"] or b""))
        for t in response["responses"] for p in t["partitions"]]


def _answers(port: int, version: int) -> dict[tuple[int, int], tuple[Any, int]]:
    """Each case's summary (topic names replaced by "T") and the session id answered."""
    found = {}
    with RawConnection(port) as conn:
        topic = unique_topic("fetch-sessions")
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
        produced = produce_partition_response(
            conn.request(0, 9, produce_body(topic, 0, record_batch([b"a", b"b", b"c"], int(time.time() * 1000)))))
        assert produced["error_code"] == 0, produced
        for session_id, epoch in CASES:
            response = _fetch(conn, version, topic, session_id, epoch)
            error, parts = _summary(response)
            found[(session_id, epoch)] = ((error, [("T" if t == topic else t, *rest) for t, *rest in parts]),
                                          response["session_id"])
    return found


@pytest.mark.parametrize("version", [7, 11, 12])
def test_every_session_id_and_epoch_is_answered_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess,
                                                         version: int) -> None:
    ours, theirs = _answers(broker.port, version), _answers(reference_kafka.port, version)
    differences = [f"{CASES[case]} {case}: pykafkad {ours[case][0]} kafka {theirs[case][0]}"
                   for case in CASES if ours[case][0] != theirs[case][0]]
    assert not differences, "\n".join(differences)
    full = [(0, 0, [(0, 3)])]
    for (session_id, epoch), ((error, parts), _) in ours.items():
        if epoch in (0, -1):
            assert error == 0 and [(p, e, b) for _, p, e, b in parts] == full, (session_id, epoch)
        else:
            assert (error, parts) == (FETCH_SESSION_ID_NOT_FOUND, []), (session_id, epoch)
    # Both open a session only where they are asked to (epoch 0), and answer 0 otherwise.
    for answers in (ours, theirs):
        for (session_id, epoch), (_, answered_session) in answers.items():
            assert (answered_session != 0) == (epoch == 0), (session_id, epoch, answered_session)


def _wait_for_leaders(conn: RawConnection, topic: str, partitions: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        listed = conn.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": i, "current_leader_epoch": -1, "timestamp": -1}
                                           for i in range(partitions)]}]})
        if all(p["error_code"] == 0 for p in listed["topics"][0]["partitions"]):
            return
        assert time.monotonic() < deadline, listed
        time.sleep(0.05)


def _produce(conn: RawConnection, topic: str, partition: int, values: list[bytes]) -> None:
    produced = produce_partition_response(conn.request(0, 9, produce_body(
        topic, partition, record_batch(values, int(time.time() * 1000)))))
    assert produced["error_code"] == 0, produced


def _session_life(port: int, version: int) -> list[tuple[str, Any]]:
    """What each step of one session's life is answered: (step, (error, partitions, session id given?))."""
    steps: list[tuple[str, Any]] = []
    with RawConnection(port) as conn:
        topic = unique_topic("fetch-session-life")
        conn.create_topic(topic, partitions=3)
        _wait_for_leaders(conn, topic, 3)
        by_id = version >= 13
        key: dict[str, Any] = {"topic": topic}
        if by_id:
            meta = conn.request(3, 12, {"topics": [{"topic_id": uuid.UUID(int=0), "name": topic}],
                                        "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
            key = {"topic_id": meta["topics"][0]["topic_id"]}
        _produce(conn, topic, 0, [b"a", b"b", b"c"])

        def fetch(session_id: int, epoch: int, offsets: dict[int, int], forget: list[int] = ()) -> dict[str, Any]:
            return conn.request(1, version, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": session_id, "session_epoch": epoch, "rack_id": "",
                "topics": [{**key, "partitions": [
                    {"partition": p, "current_leader_epoch": -1, "fetch_offset": o, "log_start_offset": -1,
                     "last_fetched_epoch": -1, "partition_max_bytes": 1 << 20} for p, o in offsets.items()]}]
                if offsets else [],
                "forgotten_topics_data": [{**key, "partitions": list(forget)}] if forget else []})

        def summary(response: dict[str, Any]) -> tuple[int, list[tuple[int, int, int, int, list]], bool]:
            return response["error_code"], sorted(
                (p["partition_index"], p["error_code"], p["high_watermark"], p["log_start_offset"],
                 batches_in(p["records"] or b""))
                for t in response["responses"] for p in t["partitions"]), response["session_id"] != 0

        opened = fetch(0, 0, {0: 0, 1: 0, 2: 0})
        session = opened["session_id"]
        steps.append(("full fetch opens a session", summary(opened)))
        steps.append(("partition 0 moved to its end: nothing new", summary(fetch(session, 1, {0: 3}))))
        _produce(conn, topic, 1, [b"d", b"e"])
        steps.append(("records on partition 1: it alone", summary(fetch(session, 2, {}))))
        steps.append(("the same epoch again", summary(fetch(session, 2, {}))))
        # Positions moved alone (no partition added or forgotten), as a follower's every fetch.
        steps.append(("partition 1 moved to its end: nothing new", summary(fetch(session, 3, {1: 2}))))
        _produce(conn, topic, 1, [b"g"])
        steps.append(("a record more on partition 1: from where it moved", summary(fetch(session, 4, {}))))
        steps.append(("partition 1 moved, partition 2 forgotten", summary(fetch(session, 5, {1: 3}, [2]))))
        _produce(conn, topic, 2, [b"f"])
        steps.append(("records on the forgotten partition: nothing", summary(fetch(session, 6, {}))))
        steps.append(("closed, full fetch without a session", summary(fetch(session, -1, {0: 3}))))
        steps.append(("the closed session", summary(fetch(session, 7, {}))))
    return steps


@pytest.mark.parametrize("version", [12, 13])
def test_a_session_through_its_life_is_answered_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess,
                                                         version: int) -> None:
    ours, theirs = _session_life(broker.port, version), _session_life(reference_kafka.port, version)
    differences = [f"{step}: pykafkad {a} kafka {b}" for (step, a), (_, b) in zip(ours, theirs, strict=True)
                   if a != b]
    assert not differences, "\n".join(differences)
    answered = dict(ours)
    assert answered["records on partition 1: it alone"][1] == [(1, 0, 2, 0, [(0, 2)])]
    assert answered["a record more on partition 1: from where it moved"][1] == [(1, 0, 3, 0, [(2, 1)])]
    assert answered["the same epoch again"][0] == 71  # INVALID_FETCH_SESSION_EPOCH
    assert answered["the closed session"][0] == FETCH_SESSION_ID_NOT_FOUND
