"""Raw-socket Kafka for the tests that need to see or send exact bytes.

* `RawConnection`: a blocking socket with a timeout on every read, reading whole
  length-prefixed frames; `None` from `recv_frame` means the broker closed the connection.
* ApiVersions request/response encoded and decoded by hand (not with `wire`), so the
  header-v0 and KIP-511 checks do not share a codec with the broker under test.
* `record_batch`: a magic-v2 RecordBatch built by hand, with its CRC-32C, so a test can
  produce one exact batch or corrupt one.
* Everything else goes through the project's `wire` codec (`wire.encode_request`,
  `wire.decode_response`).
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Sequence
from typing import Any

RECV_TIMEOUT_S = 15.0

API_PRODUCE = 0
API_FETCH = 1
API_LIST_OFFSETS = 2
API_METADATA = 3
API_API_VERSIONS = 18

ERR_NONE = 0
ERR_CORRUPT_MESSAGE = 2
ERR_UNKNOWN_TOPIC_OR_PARTITION = 3
ERR_MESSAGE_TOO_LARGE = 10
ERR_UNSUPPORTED_VERSION = 35


class RawConnection:
    """One TCP connection to the broker, speaking length-prefixed frames."""

    def __init__(self, port: int, timeout: float = RECV_TIMEOUT_S) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.next_correlation_id = 1

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def recv_frame(self) -> bytes | None:
        """The next response frame without its length prefix; None if the broker closed the connection.

        A read timeout raises socket.timeout (TimeoutError): the broker neither answered nor closed.
        """
        head = self._recv_exact(4)
        if head is None:
            return None
        (size,) = struct.unpack(">i", head)
        assert 0 <= size <= 200_000_000, f"absurd response length {size}"
        body = self._recv_exact(size)
        assert body is not None, f"connection closed in the middle of a {size}-byte response"
        return body

    def wait_closed(self, timeout: float = RECV_TIMEOUT_S) -> bool:
        """True once the broker closes the connection (EOF or reset); False if it stays open that long.

        Anything the broker sends meanwhile is read and discarded.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                return True
            except TimeoutError:
                return False
            if not chunk:
                return True
        return False

    def correlation_id(self) -> int:
        cid = self.next_correlation_id
        self.next_correlation_id += 1
        return cid

    def request(self, api_key: int, api_version: int, body: dict[str, Any]) -> dict[str, Any]:
        """Send one request encoded by `wire`, return the decoded response body (correlation id checked)."""
        import wire

        cid = self.correlation_id()
        self.send(wire.encode_request(api_key, api_version, cid, "compat-raw", body))
        frame = self.recv_frame()
        assert frame is not None, (
            f"broker closed the connection instead of answering api {api_key} v{api_version}"
        )
        got_cid, response = wire.decode_response(api_key, api_version, frame)
        assert got_cid == cid, f"correlation id {got_cid} != {cid}"
        return response

    def create_topic(self, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
        """CreateTopics v7 of one topic (replication factor 1); asserts that it was created."""
        created = self.request(19, 7, {"topics": [{
            "name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}], "timeout_ms": 60000})
        assert created["topics"][0]["error_code"] == 0, created

    def wait_for_leader(self, topic: str, timeout_s: float = 30.0) -> None:
        """Until partition 0 of ``topic`` has a leader.  Kafka creates a topic's partitions after it
        answers CreateTopics, and answers NOT_LEADER_OR_FOLLOWER until then; pykafkad at once."""
        deadline = time.monotonic() + timeout_s
        while True:
            listed = self.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                "timestamp": -1}]}]})
            error = listed["topics"][0]["partitions"][0]["error_code"]
            if error == 0:
                return
            assert time.monotonic() < deadline, f"{topic} has no leader after {timeout_s} s (error {error})"
            time.sleep(0.05)

    def api_versions(self, version: int = 3) -> tuple[int, dict[int, tuple[int, int]]]:
        """Hand-encoded ApiVersions; returns (error_code, {api_key: (min, max)})."""
        cid = self.correlation_id()
        self.send(api_versions_request(version, cid))
        frame = self.recv_frame()
        assert frame is not None, f"broker closed the connection on ApiVersions v{version}"
        got_cid, error_code, apis = parse_api_versions_response(frame, version)
        assert got_cid == cid, f"correlation id {got_cid} != {cid}"
        return error_code, apis


# ----------------------------------------------------------------------------------------------------
# Hand-coded primitives
# ----------------------------------------------------------------------------------------------------


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(n: int) -> bytes:
    return uvarint((n << 1) ^ (n >> 63))


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        assert shift < 35, "unsigned varint too long"


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def request_header_v1(
    api_key: int, api_version: int, correlation_id: int, client_id: str = "compat-raw"
) -> bytes:
    cid = client_id.encode()
    return struct.pack(">hhih", api_key, api_version, correlation_id, len(cid)) + cid


def api_versions_request(version: int, correlation_id: int) -> bytes:
    """ApiVersions request frame: header v1 for v0-2, header v2 (+ empty tagged fields) and the
    client software fields for v3+ (also for versions newer than any schema, as clients do)."""
    header = request_header_v1(API_API_VERSIONS, version, correlation_id)
    if version < 3:
        return frame(header)
    name, ver = b"compat-tests", b"1.0"
    body = uvarint(len(name) + 1) + name + uvarint(len(ver) + 1) + ver + b"\x00"
    return frame(header + b"\x00" + body)


def parse_api_versions_response(data: bytes, version: int) -> tuple[int, int, dict[int, tuple[int, int]]]:
    """Strictly parse an ApiVersions response frame (no length prefix) with a v0 response header.

    For version >= 3 the flexible body is parsed, unless error_code is UNSUPPORTED_VERSION, in which
    case the body must be the v0 layout (KIP-511).  Every byte must be consumed.
    Returns (correlation_id, error_code, {api_key: (min, max)}).
    """
    (correlation_id,) = struct.unpack_from(">i", data, 0)
    pos = 4  # response header v0: correlation id only, never a tagged-field byte
    (error_code,) = struct.unpack_from(">h", data, pos)
    pos += 2
    apis: dict[int, tuple[int, int]] = {}
    flexible = version >= 3 and error_code != ERR_UNSUPPORTED_VERSION
    if flexible:
        n, pos = read_uvarint(data, pos)
        count = n - 1
    else:
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
    assert 0 <= count < 1000, f"implausible api count {count}"
    for _ in range(count):
        key, lo, hi = struct.unpack_from(">hhh", data, pos)
        pos += 6
        if flexible:
            pos = _skip_tagged_fields(data, pos)
        apis[key] = (lo, hi)
    if version >= 1 and error_code != ERR_UNSUPPORTED_VERSION:
        pos += 4  # throttle_time_ms
    if flexible:
        pos = _skip_tagged_fields(data, pos)
    assert pos == len(data), f"ApiVersions v{version} response: {len(data) - pos} unparsed trailing bytes"
    return correlation_id, error_code, apis


def _skip_tagged_fields(data: bytes, pos: int) -> int:
    n, pos = read_uvarint(data, pos)
    for _ in range(n):
        _tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        pos += size
    return pos


# ----------------------------------------------------------------------------------------------------
# RecordBatch v2
# ----------------------------------------------------------------------------------------------------


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def record_batch(
    values: Sequence[bytes],
    base_timestamp: int,
    *,
    keys: Sequence[bytes | None] | None = None,
    base_offset: int = 0,
) -> bytes:
    """An uncompressed magic-v2 RecordBatch holding one record per value (timestamps base+i)."""
    records = bytearray()
    for i, value in enumerate(values):
        key = keys[i] if keys is not None else None
        body = bytearray(b"\x00")  # attributes
        body += varint(i)  # timestamp delta
        body += varint(i)  # offset delta
        body += varint(-1) if key is None else varint(len(key)) + key
        body += varint(len(value)) + value
        body += varint(0)  # headers
        records += varint(len(body)) + body
    n = len(values)
    after_crc = (
        struct.pack(">hiqqqhii", 0, n - 1, base_timestamp, base_timestamp + n - 1, -1, -1, -1, n) + records
    )
    crc = crc32c(after_crc)
    after_length = struct.pack(">ibI", 0, 2, crc) + after_crc  # partition leader epoch, magic, crc
    return struct.pack(">qi", base_offset, len(after_length)) + after_length


def corrupt_crc(batch: bytes) -> bytes:
    """The same batch with one payload byte flipped, so its stored CRC no longer matches."""
    data = bytearray(batch)
    data[-2] ^= 0xFF
    return bytes(data)


def batches_in(records: bytes) -> list[tuple[int, int]]:
    """(base_offset, record_count) of each v2 batch in a Fetch response's records blob."""
    out = []
    pos = 0
    while pos + 12 <= len(records):
        base_offset, length = struct.unpack_from(">qi", records, pos)
        if pos + 12 + length > len(records):
            break  # a partial batch at the end is allowed
        (count,) = struct.unpack_from(">i", records, pos + 57)
        out.append((base_offset, count))
        pos += 12 + length
    return out


def produce_body(topic: str, partition: int, records: bytes, acks: int = -1) -> dict[str, Any]:
    """A Produce (v3..v12) request body for one partition."""
    return {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 10000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    }


def produce_partition_response(response: dict[str, Any]) -> dict[str, Any]:
    [topic] = response["responses"]
    [part] = topic["partition_responses"]
    return part
