"""Per-connection ordering and cross-connection independence.

Responses on one connection leave in request order even when a later request is quicker; a
long-polling Fetch on one connection never holds up another connection.
"""

from __future__ import annotations

import select
import uuid

import wire
from compat_tests.broker_process import BrokerProcess
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch

FETCH, METADATA, CREATE_TOPICS, DELETE_TOPICS = 1, 3, 19, 20
LONG_POLL_MS = 3000


def _empty_topic(broker: BrokerProcess) -> str:
    name = f"order-{uuid.uuid4().hex[:8]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(name)
    return name


def _long_poll(name: str, correlation_id: int) -> bytes:
    body = {"replica_id": -1, "max_wait_ms": LONG_POLL_MS, "min_bytes": 1, "max_bytes": 1 << 20,
            "session_epoch": -1,
            "topics": [{"topic": name, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                      "partition_max_bytes": 1 << 20}]}]}
    return wire.encode_request(FETCH, 12, correlation_id, "order", body)


def test_pipelined_responses_keep_request_order(broker: BrokerProcess) -> None:
    name = _empty_topic(broker)
    with RawConnection(broker.port) as conn:
        conn.send(_long_poll(name, 100) + wire.encode_request(METADATA, 12, 101, "order", {"topics": []}))
        first, second = conn.recv_frame(), conn.recv_frame()
    assert first is not None and second is not None
    assert wire.decode_response(FETCH, 12, first)[0] == 100
    assert wire.decode_response(METADATA, 12, second)[0] == 101


def test_long_poll_on_one_connection_does_not_stall_another(broker: BrokerProcess) -> None:
    name = _empty_topic(broker)
    with RawConnection(broker.port) as waiting, RawConnection(broker.port) as other:
        waiting.send(_long_poll(name, 7))
        # Answered while the fetch on the first connection is still waiting for data.
        answer = other.request(METADATA, 12, {"topics": [{"name": name}]})
        assert answer["topics"][0]["error_code"] == 0
        readable, _, _ = select.select([waiting.sock], [], [], 0)
        assert not readable, "the long poll answered before the other connection was served"
        frame = waiting.recv_frame()
    assert frame is not None
    correlation_id, fetched = wire.decode_response(FETCH, 12, frame)
    assert correlation_id == 7
    assert not fetched["responses"][0]["partitions"][0]["records"]


def test_produce_is_acknowledged_before_a_following_bad_frame_closes(broker: BrokerProcess) -> None:
    name = _empty_topic(broker)
    produce = wire.encode_request(0, 9, 41, "order", produce_body(name, 0, record_batch([b"kept"], 1_000)))
    # A Produce header with a body that cannot be decoded: it is only looked at after the first
    # Produce was handled, while that one's answer may still be waiting to be sent with the next.
    bad = (0).to_bytes(2, "big") + (9).to_bytes(2, "big") + (42).to_bytes(4, "big") + b"\xff\xff\x00\xff\xff\xff"
    bad_produce = len(bad).to_bytes(4, "big") + bad
    with RawConnection(broker.port) as conn:
        conn.send(produce + bad_produce)
        frame = conn.recv_frame()
        assert frame is not None, "the Produce that was appended must be acknowledged"
        correlation_id, answer = wire.decode_response(0, 9, frame)
        assert correlation_id == 41
        assert produce_partition_response(answer)["error_code"] == 0
        assert conn.wait_closed()


def test_creating_thousands_of_partitions_does_not_stall_other_connections(broker: BrokerProcess) -> None:
    name = f"wide-{uuid.uuid4().hex[:8]}"
    create = wire.encode_request(CREATE_TOPICS, 7, 9, "order", {
        "topics": [{"name": name, "num_partitions": 3000, "replication_factor": 1}], "timeout_ms": 60000})
    served_meanwhile = 0
    with RawConnection(broker.port, timeout=120) as creating, RawConnection(broker.port) as other:
        creating.send(create)
        while not select.select([creating.sock], [], [], 0)[0]:
            answer = other.request(METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
            if answer["topics"][0]["error_code"] != 0 and not select.select([creating.sock], [], [], 0)[0]:
                served_meanwhile += 1
        frame = creating.recv_frame()
    assert frame is not None
    assert wire.decode_response(CREATE_TOPICS, 7, frame)[1]["topics"][0]["error_code"] == 0
    assert served_meanwhile > 0, "no other request was answered while the partitions were being created"


def test_deleting_thousands_of_partitions_does_not_stall_other_connections(broker: BrokerProcess) -> None:
    name = f"wide-del-{uuid.uuid4().hex[:8]}"
    partitions = 3000
    with RawConnection(broker.port, timeout=120) as conn:
        conn.create_topic(name, partitions)
    last_dir = broker.partition_dir(name, partitions - 1)
    assert last_dir.exists()
    delete = wire.encode_request(DELETE_TOPICS, 6, 2, "order", {
        "topics": [{"name": name, "topic_id": uuid.UUID(int=0)}], "timeout_ms": 60000})
    served_meanwhile = 0
    with RawConnection(broker.port, timeout=120) as deleting, RawConnection(broker.port) as other:
        deleting.send(delete)
        while not select.select([deleting.sock], [], [], 0)[0]:
            answer = other.request(METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
            # Answered after the topic left the model while its directories were still being
            # removed (the last is removed last): the old code removed them all before answering
            # anything else.
            if (answer["topics"][0]["error_code"] != 0 and last_dir.exists()
                    and not select.select([deleting.sock], [], [], 0)[0]):
                served_meanwhile += 1
        frame = deleting.recv_frame()
    assert frame is not None
    assert wire.decode_response(DELETE_TOPICS, 6, frame)[1]["responses"][0]["error_code"] == 0
    assert served_meanwhile > 0, "no other request was answered while the partitions were being deleted"
    assert not any(broker.log_dir.glob(f"{name}-*")), "a deleted partition's directory is left"
