"""A consumer's Fetch over its quota is answered with no records, as Kafka answers it.

Kafka's KafkaApis checks a consumer Fetch's response size against ``consumer_byte_rate`` (and its
handler time against ``request_percentage``) before it sends it; when the client is over, the
answer is the fetch context's throttled response: the throttle time, no error and no topics at
all; the bytes are taken back off the quota, and the channel is muted.  pykafkad sent the records
with the throttle time.  The same raw Fetch goes to pykafkad and to Kafka 4.4.0 from a client id
with a small byte rate, on a connection of its own each time (a throttled one is muted).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

import wire
from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.raw_kafka import RawConnection, batches_in, produce_body, produce_partition_response, record_batch

ALTER_CLIENT_QUOTAS, FETCH = 49, 1
RECORDS, RECORD_BYTES = 30, 10_000  # 300 KB in one batch
CONSUMER_BYTE_RATE = 10_000.0  # far below 300 KB over any quota window
QUOTA_APPLIED_S = 30.0


def _fetch_as(port: int, client_id: str, topic: str, version: int) -> dict[str, Any]:
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                        "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]}
    with RawConnection(port) as conn:
        cid = conn.correlation_id()
        conn.send(wire.encode_request(FETCH, version, cid, client_id, body))
        frame = conn.recv_frame()
        assert frame is not None, "no answer to the Fetch"
        got_cid, response = wire.decode_response(FETCH, version, frame)
        assert got_cid == cid
        return response


def _set_quota(port: int, client_id: str, rate: float | None) -> None:
    with RawConnection(port) as conn:
        [entry] = conn.request(ALTER_CLIENT_QUOTAS, 1, {"validate_only": False, "entries": [{
            "entity": [{"entity_type": "client-id", "entity_name": client_id}],
            "ops": [{"key": "consumer_byte_rate", "value": rate or 0.0, "remove": rate is None}]}]})["entries"]
    assert entry["error_code"] == 0, entry


def _throttled_fetch(broker: BrokerProcess, version: int) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """The first throttled answer to a Fetch of 300 KB from a client id held to 10 KB/s, and the
    batches an unthrottled client id reads with the same Fetch."""
    topic, client = unique_topic("throttled-fetch"), f"throttled-{uuid.uuid4().hex[:8]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
        batch = record_batch([bytes([65 + i % 26]) * RECORD_BYTES for i in range(RECORDS)], int(time.time() * 1000))
        assert produce_partition_response(conn.request(0, 9, produce_body(topic, 0, batch)))["error_code"] == 0
    free = _fetch_as(broker.port, f"free-{client}", topic, version)
    assert free["throttle_time_ms"] == 0
    unthrottled = [batches_in(p["records"] or b"") for t in free["responses"] for p in t["partitions"]]
    _set_quota(broker.port, client, CONSUMER_BYTE_RATE)
    try:
        # Kafka applies a new quota once its broker has read the metadata record: until then
        # the fetch goes through unthrottled.
        deadline = time.monotonic() + QUOTA_APPLIED_S
        while True:
            answer = _fetch_as(broker.port, client, topic, version)
            if answer["throttle_time_ms"] > 0:
                return answer, unthrottled[0]
            assert time.monotonic() < deadline, f"{broker.name} never throttled client id {client}"
            time.sleep(0.1)
    finally:
        _set_quota(broker.port, client, None)


@pytest.mark.parametrize("version", [11, 12])
@pytest.mark.compat_timeout(180)
def test_throttled_fetch_carries_no_records_as_on_kafka(broker_factory: BrokerFactory,
                                                        reference_kafka: BrokerProcess, version: int) -> None:
    broker = broker_factory("throttled-fetch", {"quota.window.num": "2", "quota.window.size.seconds": "1"})
    ours, ours_free = _throttled_fetch(broker, version)
    theirs, theirs_free = _throttled_fetch(reference_kafka, version)
    # Without the quota both answer the whole batch.
    assert ours_free == theirs_free == [(0, RECORDS)]
    # Over it: the throttle time, no error, no session and no topics at all.
    for answer in (ours, theirs):
        assert answer["throttle_time_ms"] > 0
    shape = {key: ours[key] for key in ("error_code", "session_id", "responses")}
    assert shape == {key: theirs[key] for key in ("error_code", "session_id", "responses")} == \
        {"error_code": 0, "session_id": 0, "responses": []}, (ours, theirs)
