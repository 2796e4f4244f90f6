"""Fetch sessions (KIP-227) as Kafka's FetchManager answers them, for every kind of session id and epoch.

Kafka reads a Fetch request's (session id, session epoch) so: epoch 0 opens a new session and epoch
-1 (FINAL_EPOCH) asks for none; both are full fetches answered with the partitions asked for, and a
non-zero session id beside them only names a session to close.  Any other epoch is an incremental
fetch on the session named; one the broker does not have gets FETCH_SESSION_ID_NOT_FOUND and no
topics.  segmentio/kafka-go's Client.Fetch sends (-1, -1); pykafkad answered it
FETCH_SESSION_ID_NOT_FOUND with no topics, so the client reported "topic not found".

Each combination goes to pykafkad and to a real Kafka 4.1.1 on the same connection after a
produce, and the top-level error, the partitions answered and their records must match.  The only
difference allowed: Kafka opens a session for epoch 0 and answers its id; pykafkad keeps sessions
for its followers only (cluster_tests/test_fetch_sessions.py) and answers a client 0, which tells
it to go on with full fetches.
"""

from __future__ import annotations

import time
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
    for (session_id, epoch), ((error, parts), answered_session) in ours.items():
        if epoch in (0, -1):
            assert error == 0 and [(p, e, b) for _, p, e, b in parts] == full, (session_id, epoch)
        else:
            assert (error, parts) == (FETCH_SESSION_ID_NOT_FOUND, []), (session_id, epoch)
        assert answered_session == 0  # pykafkad keeps no sessions: clients go on with full fetches
    # Kafka opens a session only where it is asked to (epoch 0), and answers 0 otherwise.
    for (session_id, epoch), (_, answered_session) in theirs.items():
        assert (answered_session != 0) == (epoch == 0), (session_id, epoch, answered_session)
