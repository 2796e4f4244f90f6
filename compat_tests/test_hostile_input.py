"""Hostile and malformed input over raw sockets: oversized, truncated and garbage frames,
unknown API keys, unsupported versions, ApiVersions v127 (KIP-511) and a Produce with a
corrupt CRC.  After each, the broker must still be running, a connection opened before the
abuse must still answer, and a stock client must still produce and consume."""

from __future__ import annotations

import os
import random
import struct
from collections.abc import Iterator

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, Rec, create_topic, now_ms, unique_topic
from compat_tests.raw_kafka import (
    API_API_VERSIONS,
    API_METADATA,
    API_PRODUCE,
    ERR_CORRUPT_MESSAGE,
    ERR_NONE,
    ERR_UNSUPPORTED_VERSION,
    RawConnection,
    corrupt_crc,
    frame,
    produce_body,
    produce_partition_response,
    record_batch,
    request_header_v1,
)

MAX_REQUEST = 1_048_576


@pytest.fixture(scope="module")
def hostile_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    b = BrokerProcess(
        tmp_path_factory.mktemp("hostile") / "logs",
        {
            "socket.request.max.bytes": str(MAX_REQUEST),
            "message.max.bytes": "500000",
            "auto.create.topics.enable": "false",
        },
        name="hostile-broker",
    )
    b.start()
    yield b
    b.close()


@pytest.fixture(scope="module")
def health_topic(hostile_broker: BrokerProcess) -> str:
    topic = unique_topic("health")
    create_topic(hostile_broker.bootstrap, topic)
    return topic


@pytest.fixture(scope="module")
def bystander(hostile_broker: BrokerProcess) -> Iterator[RawConnection]:
    """A connection opened before any abuse; it must keep working throughout."""
    conn = RawConnection(hostile_broker.port)
    error, _ = conn.api_versions(3)
    assert error == ERR_NONE
    yield conn
    conn.close()


@pytest.fixture
def healthy(hostile_broker: BrokerProcess, health_topic: str, bystander: RawConnection) -> Iterator[None]:
    """Check, after the test body, that the broker survived and still serves everyone."""
    yield
    assert hostile_broker.is_alive(), f"broker died\n{hostile_broker.stderr_tail()}"
    error, apis = bystander.api_versions(3)
    assert error == ERR_NONE and API_PRODUCE in apis, "pre-existing connection no longer answers ApiVersions"
    with RawConnection(hostile_broker.port) as fresh:
        assert fresh.api_versions(3)[0] == ERR_NONE
    client = ConfluentClient(hostile_broker.bootstrap)
    value = os.urandom(16).hex().encode()
    [offset] = client.produce(health_topic, [Rec(value, b"health")])
    [got] = client.consume(health_topic, 0, offset, count=1)
    assert got.value == value


@pytest.mark.usefixtures("healthy")
def test_frame_larger_than_socket_request_max_bytes_is_refused(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        conn.send(struct.pack(">i", MAX_REQUEST + 1) + request_header_v1(API_API_VERSIONS, 0, 1))
        try:
            conn.send(b"\x00" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass  # already closed: fine
        assert conn.wait_closed(), "broker kept a connection whose frame exceeds socket.request.max.bytes"


@pytest.mark.usefixtures("healthy")
def test_negative_frame_length_is_refused(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        conn.send(struct.pack(">i", -5) + b"\x00" * 16)
        assert conn.wait_closed(), "broker kept a connection that sent a negative frame length"


@pytest.mark.usefixtures("healthy")
def test_truncated_frame_then_close(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        conn.send(struct.pack(">i", 100) + b"\x00\x12\x00\x00\x00\x00\x00\x01\x00\x00")


@pytest.mark.usefixtures("healthy")
def test_truncated_length_prefix_then_close(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        conn.send(b"\x00\x00")


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.usefixtures("healthy")
def test_random_garbage(hostile_broker: BrokerProcess, seed: int) -> None:
    rng = random.Random(seed)
    with RawConnection(hostile_broker.port) as conn:
        try:
            conn.send(bytes(rng.getrandbits(8) for _ in range(4096)))
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.mark.parametrize("seed", [4, 5, 6])
@pytest.mark.usefixtures("healthy")
def test_correctly_framed_garbage_gets_an_answer_or_a_close(hostile_broker: BrokerProcess, seed: int) -> None:
    rng = random.Random(seed)
    body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(2, 600)))
    with RawConnection(hostile_broker.port) as conn:
        conn.send(frame(body))
        _answered_or_closed(conn)


@pytest.mark.usefixtures("healthy")
def test_garbage_body_of_a_known_api(hostile_broker: BrokerProcess) -> None:
    """A Metadata v1 header followed by a body that cannot be parsed."""
    with RawConnection(hostile_broker.port) as conn:
        conn.send(frame(request_header_v1(API_METADATA, 1, 42) + b"\x7f\xff\xff\xff\x01"))
        _answered_or_closed(conn, 42)


@pytest.mark.usefixtures("healthy")
def test_unknown_api_key(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        conn.send(frame(request_header_v1(9999, 0, 77)))
        _answered_or_closed(conn, 77)


@pytest.mark.usefixtures("healthy")
def test_unsupported_version_of_a_normal_api(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        conn.send(frame(request_header_v1(API_METADATA, 99, 78) + b"\x00" * 8))
        _answered_or_closed(conn, 78)


@pytest.mark.usefixtures("healthy")
def test_api_versions_v127_answers_unsupported_version_in_v0_layout(hostile_broker: BrokerProcess) -> None:
    with RawConnection(hostile_broker.port) as conn:
        error, apis = conn.api_versions(127)
        assert error == ERR_UNSUPPORTED_VERSION
        # KIP-511: at least ApiVersions' own supported range, so the client can retry (Kafka lists only it).
        assert API_API_VERSIONS in apis, f"the error response must list ApiVersions' versions, got {apis}"
        assert apis[API_API_VERSIONS][0] == 0 and apis[API_API_VERSIONS][1] >= 3
        # The connection stays open and the client can retry with a version the broker knows.
        error, apis = conn.api_versions(3)
        assert error == ERR_NONE and API_PRODUCE in apis


@pytest.mark.usefixtures("healthy")
def test_produce_with_corrupt_crc_is_rejected_and_not_stored(hostile_broker: BrokerProcess) -> None:
    topic = unique_topic("corrupt")
    create_topic(hostile_broker.bootstrap, topic)
    ts = now_ms()
    good = record_batch([b"good-%d" % i for i in range(5)], ts)
    client = ConfluentClient(hostile_broker.bootstrap)
    with RawConnection(hostile_broker.port) as conn:
        part = produce_partition_response(conn.request(API_PRODUCE, 9, produce_body(topic, 0, good)))
        assert part["error_code"] == ERR_NONE and part["base_offset"] == 0, part

        bad = corrupt_crc(record_batch([b"bad-%d" % i for i in range(3)], ts))
        part = produce_partition_response(conn.request(API_PRODUCE, 9, produce_body(topic, 0, bad)))
        assert part["error_code"] == ERR_CORRUPT_MESSAGE, part

        assert client.offsets(topic, 0) == (0, 5), "the corrupt batch changed the log end offset"
        # Same connection still usable; the next good batch continues right after the first one.
        again = record_batch([b"after-%d" % i for i in range(2)], ts)
        part = produce_partition_response(conn.request(API_PRODUCE, 9, produce_body(topic, 0, again)))
        assert part["error_code"] == ERR_NONE and part["base_offset"] == 5, part
    got = client.consume(topic, 0, "earliest", count=7)
    assert [g.value for g in got] == [b"good-%d" % i for i in range(5)] + [b"after-0", b"after-1"]
    assert [g.offset for g in got] == list(range(7))
    assert client.offsets(topic, 0) == (0, 7)


def _answered_or_closed(conn: RawConnection, correlation_id: int | None = None) -> None:
    """The broker must react: answer (with our correlation id) or close. Hanging is a failure."""
    try:
        data = conn.recv_frame()
    except TimeoutError:
        pytest.fail("broker neither answered nor closed the connection within the timeout")
    if data is not None and correlation_id is not None:
        (got,) = struct.unpack_from(">i", data, 0)
        assert got == correlation_id, f"answer carries correlation id {got}, expected {correlation_id}"
