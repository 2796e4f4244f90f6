"""Long polls on a leader end when what they wait for arrives, not at their maximum wait.

A follower's fetch waits for records, and an append wakes it; a consumer's fetch and an acks=all
produce wait for the high watermark, and its move wakes them (``pykafkad/replica/watchers.py``).
Here every wait is far longer than the test's own timeouts: followers park for
``replica.fetch.wait.max.ms`` of 20 s, the consumer's raw Fetch for 20 s, while the producer gives
up after 15 s and the consumer's socket after 15 s.  A wake-up that did not come would fail the
test, not slow it.

Three brokers on a real ZooKeeper; confluent-kafka's acks=all producer; a raw Fetch v12 on the
leader for the consumer, so that its maximum wait is exactly the one sent.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cluster_tests.clients import create_topic, produce
from cluster_tests.conftest import Cluster
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

FETCH = 1
LONG_WAIT_MS = 20_000
GIVE_UP_S = 15
SLOW_FOLLOWERS = {"replica.fetch.wait.max.ms": str(LONG_WAIT_MS)}


def _long_poll(port: int, topic: str, offset: int) -> dict[str, Any]:
    """A consumer's Fetch of partition 0 from ``offset``, waiting up to LONG_WAIT_MS for one byte."""
    with RawConnection(port, timeout=GIVE_UP_S) as conn:
        answer = conn.request(FETCH, 12, {
            "replica_id": -1, "max_wait_ms": LONG_WAIT_MS, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
                "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
    return answer["responses"][0]["partitions"][0]


def _answer_after_produce(cluster: Cluster, topic: str, leader: int) -> dict[str, Any]:
    """Park a consumer's long poll at the end of ``topic`` (one record in), then produce one more
    with acks=all; the long poll's answer."""
    produce(cluster.bootstrap, topic, [1], **{"message.timeout.ms": GIVE_UP_S * 1000})
    answers: list[dict[str, Any]] = []
    failures: list[BaseException] = []

    def poll() -> None:
        try:
            answers.append(_long_poll(cluster.brokers[leader].port, topic, 1))
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            failures.append(e)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        # If the followers' parked fetches were not woken by the append, this would time out.
        produce(cluster.bootstrap, topic, [2], **{"message.timeout.ms": GIVE_UP_S * 1000})
    finally:
        poller.join(GIVE_UP_S + 5)
    assert not failures, f"the consumer's long poll was not answered in {GIVE_UP_S}s: {failures[0]!r}"
    return answers[0]


@pytest.mark.cluster_timeout(240)
def test_appends_wake_followers_and_high_watermark_moves_wake_consumers(cluster: Cluster) -> None:
    cluster.start_brokers(SLOW_FOLLOWERS)
    [state] = create_topic(cluster, "polled", configs={"min.insync.replicas": "2"})
    answer = _answer_after_produce(cluster, "polled", state["leader"])
    assert answer["error_code"] == ErrorCode.NONE
    assert answer["high_watermark"] == 2
    assert answer["records"], "the long poll answered without the record"

    # One replica: the append itself moves the high watermark, which wakes the consumer.
    [single] = create_topic(cluster, "polled-alone", replication_factor=1)
    answer = _answer_after_produce(cluster, "polled-alone", single["leader"])
    assert answer["error_code"] == ErrorCode.NONE
    assert answer["high_watermark"] == 2
    assert answer["records"], "the long poll answered without the record"
