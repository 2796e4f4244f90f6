"""Parked fetches the log answers itself (``replica/delayed_fetch.py``): a follower's by the leader's
append, a consumer's by the high watermark's move.  The frame the log writes to the socket is, byte
for byte, the one the codec makes for the same answer with the records the log holds (and, for a
consumer, the new watermarks); only an append at the follower's offset, in the epoch checked, answers
it, and only a high watermark above the consumer's offset, with the records below it; a closed wait
gets nothing; and what a full socket does not take comes back to be sent.

The cluster and compatibility tests run the whole path with real brokers and clients; these pin the
frame and the edges."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

import wire
from pykafkad._rust_log import DelayedFetch, PartitionLog, encode_batch
from pykafkad.handlers.api import RequestContext
from pykafkad.handlers.fetch import _one_partition_answer, _partition_entry
from pykafkad.replica import delayed_fetch
from pykafkad.replica.fetch_session import FetchSession
from pykafkad.replica.partition import FetchedData
from pykafkad.replica.replica_manager import FetchEntry
from rust_log.tests_py.test_smoke import batch
from wire.error_codes import ErrorCode

EPOCH = 3
CORRELATION_ID = 4321
WATERMARKS = FetchedData(ErrorCode.NONE, high_watermark=2, last_stable_offset=2, log_start_offset=0)


@pytest.fixture
def sockets() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected TCP pair on loopback: the leader's end (non-blocking, as Trio keeps it) and the
    follower's."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        follower = socket.create_connection(server.getsockname())
        leader, _ = server.accept()
    leader.setblocking(False)
    follower.settimeout(5)
    yield leader, follower
    leader.close()
    follower.close()


def _template(session_id: int = 77, version: int = 12, follower: bool = True, read_committed: bool = False):
    ctx = RequestContext(1, version, CORRELATION_ID, "replica-fetcher-2", "127.0.0.1:1")
    session = FetchSession(session_id, replica_id=2 if follower else -1, by_id=version >= 13)
    key = uuid.UUID(int=1) if version >= 13 else "orders"
    return _one_partition_answer(ctx, session, version >= 13, [(key, 5)], follower, read_committed), key


def _expected(records: bytes, session_id: int = 77, version: int = 12, key: object = "orders",
              high_watermark: int = WATERMARKS.high_watermark,
              last_stable_offset: int = WATERMARKS.last_stable_offset, read_committed: bool = False) -> bytes:
    data = FetchedData(ErrorCode.NONE, high_watermark, last_stable_offset, WATERMARKS.log_start_offset, records,
                       aborted_transactions=[] if read_committed else None)
    field = "topic_id" if version >= 13 else "topic"
    return bytes(wire.encode_response(1, version, CORRELATION_ID, {
        "throttle_time_ms": 0, "error_code": ErrorCode.NONE, "session_id": session_id,
        "responses": [{field: key, "partitions": [_partition_entry(5, data)]}]}))


class _Leader:
    """A log with two records, and the leader side of a parked fetch at its end."""

    def __init__(self, path: Path, fd: int, version: int = 12, follower: bool = True,
                 read_committed: bool = False) -> None:
        self.log = PartitionLog(str(path / "orders-5"))
        self.log.append(batch([b"a", b"b"]), EPOCH)
        template, self.key = _template(version=version, follower=follower, read_committed=read_committed)
        # What the broker's read found: nothing, and reading committed no aborted transaction either.
        found = replace(WATERMARKS, aborted_transactions=[]) if read_committed else WATERMARKS
        self.parts = template(0, found)
        assert self.parts is not None
        self.fd = fd

    def park(self, fetch_offset: int = 2, epoch: int = EPOCH, max_bytes: int = 1 << 20) -> None:
        self.waiting = DelayedFetch(self.fd)
        self.log.answer_on_append(self.waiting, 0, self.parts[0], self.parts[1], fetch_offset, epoch, max_bytes)

    def park_consumer(self, fetch_offset: int = 2, max_bytes: int = 1 << 20, read_committed: bool = False) -> None:
        self.waiting = DelayedFetch(self.fd)
        self.log.answer_on_high_watermark(self.waiting, 0, self.parts[0], self.parts[1], fetch_offset, max_bytes,
                                          self.parts[2], read_committed)


def _receive(sock: socket.socket) -> bytes:
    size = int.from_bytes(_exactly(sock, 4), "big")
    return size.to_bytes(4, "big") + _exactly(sock, size)


def _exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, "the leader's end closed"
        out += chunk
    return out


@pytest.mark.parametrize("version", [12, 13])
def test_the_append_writes_the_codecs_frame(tmp_path: Path, sockets, version: int) -> None:
    leader_sock, follower = sockets
    leader = _Leader(tmp_path, leader_sock.fileno(), version)
    leader.park()
    leader.log.append(batch([b"c", b"d", b"e"]), EPOCH)
    got = _receive(follower)
    records = leader.log.read(2, 1 << 20)
    assert records, "the log holds the appended batch"
    assert got == _expected(records, version=version, key=leader.key)
    assert leader.waiting.close() == (0, len(records), b"", -1, -1)
    # Answered once: the next append writes nothing.
    leader.log.append(batch([b"f"]), EPOCH)
    follower.settimeout(0.2)
    with pytest.raises(TimeoutError):
        follower.recv(1)


@pytest.mark.parametrize("offset, epoch", [(1, EPOCH), (2, EPOCH + 1)])
def test_only_an_append_at_the_followers_offset_in_its_epoch_answers(tmp_path: Path, sockets, offset: int,
                                                                     epoch: int) -> None:
    leader_sock, follower = sockets
    leader = _Leader(tmp_path, leader_sock.fileno())
    leader.park(fetch_offset=offset, epoch=epoch)
    leader.log.append(batch([b"c"]), EPOCH)
    assert leader.waiting.close() is None
    follower.settimeout(0.2)
    with pytest.raises(TimeoutError):
        follower.recv(1)


def test_a_closed_wait_is_not_answered(tmp_path: Path, sockets) -> None:
    leader_sock, follower = sockets
    leader = _Leader(tmp_path, leader_sock.fileno())
    leader.park()
    assert leader.waiting.close() is None
    leader.log.append(batch([b"c"]), EPOCH)
    follower.settimeout(0.2)
    with pytest.raises(TimeoutError):
        follower.recv(1)


def test_what_a_full_socket_does_not_take_comes_back(tmp_path: Path, sockets) -> None:
    leader_sock, follower = sockets
    leader_sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    follower.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    leader = _Leader(tmp_path, leader_sock.fileno())
    leader.park()
    big = [bytes([i % 251]) * 1000 for i in range(120)]
    leader.log.append(batch(big), EPOCH)
    answered = leader.waiting.close()
    assert answered is not None
    tag, records_len, unsent, _, _ = answered
    assert tag == 0 and records_len > 100_000
    assert unsent, "a 120 KB answer does not fit a 4 KiB socket at once"
    with ThreadPoolExecutor(1) as pool:
        received = pool.submit(_receive, follower)
        leader_sock.setblocking(True)
        leader_sock.sendall(unsent)
        got = received.result(timeout=10)
    assert got == _expected(leader.log.read(2, 1 << 30))


def test_a_full_socket_that_takes_nothing_leaves_the_answer_to_the_broker(tmp_path: Path, sockets) -> None:
    leader_sock, follower = sockets
    leader_sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    follower.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    while True:
        try:
            leader_sock.send(b"x" * 65536)
        except BlockingIOError:
            break
    leader = _Leader(tmp_path, leader_sock.fileno())
    leader.park()
    leader.log.append(batch([b"c"]), EPOCH)
    assert leader.waiting.close() is None


@pytest.mark.parametrize("version", [12, 13, 16])
def test_the_high_watermark_answers_a_consumer_with_the_records_below_it(tmp_path: Path, sockets,
                                                                        version: int) -> None:
    leader_sock, follower = sockets  # here the consumer's end
    leader = _Leader(tmp_path, leader_sock.fileno(), version, follower=False)
    leader.park_consumer()
    for values in ([b"c", b"d"], [b"e"]):
        leader.log.append(batch(values), EPOCH)
    # An append does not answer a consumer; nor does a high watermark that stays at its offset.
    leader.log.high_watermark_moved(2)
    assert leader.waiting.close() is None
    leader.park_consumer()
    leader.log.high_watermark_moved(4)  # the first appended batch, not the second
    got = _receive(follower)
    records = leader.log.read(2, 1 << 20, max_offset=4)
    assert len(records) == len(batch([b"c", b"d"]))
    assert got == _expected(records, version=version, key=leader.key, high_watermark=4, last_stable_offset=4)
    assert leader.waiting.close() == (0, len(records), b"", 4, 4)


def test_a_consumer_template_holds_the_watermarks_where_it_says() -> None:
    template, _ = _template(follower=False)
    head, tail, at = template(0, WATERMARKS)
    assert head[at:at + 16] == (2).to_bytes(8, "big") * 2
    assert tail == b"\x00\x00\x00"


def test_a_read_committed_consumer_is_answered_below_the_last_stable_offset(tmp_path: Path, sockets) -> None:
    leader_sock, consumer = sockets
    leader = _Leader(tmp_path, leader_sock.fileno(), follower=False, read_committed=True)
    leader.log.append(batch([b"c"]), EPOCH)  # offset 2
    leader.log.append(encode_batch([(None, b"t")], 1000, producer_id=7, producer_epoch=0, base_sequence=0,
                                   transactional=True), EPOCH)  # offset 3: a transaction stays open
    leader.park_consumer(read_committed=True)
    leader.log.high_watermark_moved(4)
    got = _receive(consumer)
    records = leader.log.read(2, 1 << 20, max_offset=3)
    assert got == _expected(records, high_watermark=4, last_stable_offset=3, read_committed=True)
    assert leader.waiting.close() == (0, len(records), b"", 4, 3)
    # At the open transaction: only its end moves the last stable offset, so a higher high watermark
    # leaves the fetch to the broker's own wake-up.
    leader.park_consumer(fetch_offset=3, read_committed=True)
    leader.log.append(batch([b"d"]), EPOCH)
    leader.log.high_watermark_moved(5)
    assert leader.waiting.close() is None


def test_a_range_with_an_aborted_transaction_is_left_to_the_broker(tmp_path: Path, sockets) -> None:
    leader_sock, consumer = sockets
    leader = _Leader(tmp_path, leader_sock.fileno(), follower=False, read_committed=True)
    leader.park_consumer(read_committed=True)
    leader.log.append(encode_batch([(None, b"t")], 1000, producer_id=7, producer_epoch=0, base_sequence=0,
                                   transactional=True), EPOCH)
    leader.log.append_marker(7, 0, False, 0, EPOCH)
    leader.log.high_watermark_moved(4)
    assert leader.waiting.close() is None
    consumer.settimeout(0.2)
    with pytest.raises(TimeoutError):
        consumer.recv(1)


class _Partition:
    """Where ``DelayedFetch.wait_on`` leaves answers: each one noted (entry, fetch offset, limit)."""

    def __init__(self, fail: bool = False) -> None:
        self.left: list[tuple[int, int, int]] = []
        self.fail = fail

    def answer_on_append(self, fetch, tag, template, fetch_offset, max_bytes) -> None:  # noqa: ANN001
        if self.fail:
            raise OverflowError("can't convert negative int to unsigned")
        self.left.append((tag, fetch_offset, max_bytes))


def _pass(news: set[int], fail: int | None = None, count: int = 3):
    partitions = [_Partition(fail=i == fail) for i in range(count)]
    entries = [FetchEntry("t", i, 10, EPOCH, -5 if i == 0 else 1000) for i in range(count)]
    targets = list(zip(partitions, entries, strict=True))
    results = [WATERMARKS] * count
    delayed = delayed_fetch.DelayedFetch(-1, lambda i, data: (b"h", b"t", -1), lambda i, data: i in news, follower=True)
    return delayed, partitions, targets, results


def test_answers_are_left_on_every_caught_up_partition_when_none_has_news() -> None:
    delayed, partitions, targets, results = _pass(news=set())
    assert delayed.wait_on(targets, results, 1 << 20)
    assert [p.left for p in partitions] == [[(0, 10, 0)], [(1, 10, 1000)], [(2, 10, 1000)]]
    assert delayed.close() is False


def test_news_of_one_partition_leaves_an_answer_on_it_alone() -> None:
    delayed, partitions, targets, results = _pass(news={2})
    assert delayed.wait_on(targets, results, 1 << 20)
    assert [p.left for p in partitions] == [[], [], [(2, 10, 1000)]]
    delayed.close()


def test_news_of_two_partitions_leaves_the_answer_to_the_broker() -> None:
    # The log would answer with one of them, and the other's watermarks would wait for a later answer.
    delayed, partitions, targets, results = _pass(news={0, 2})
    assert not delayed.wait_on(targets, results, 1 << 20)
    assert all(not p.left for p in partitions)


def test_what_was_left_before_a_failure_can_be_closed() -> None:
    delayed, partitions, targets, results = _pass(news=set(), fail=1)
    with pytest.raises(OverflowError):
        delayed.wait_on(targets, results, 1 << 20)
    assert partitions[0].left
    assert delayed._waiting is not None  # what fetch_messages' finally closes
    assert delayed.close() is False
