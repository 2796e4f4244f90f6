"""The REST proxy's connections for producing: one connection per broker, on which requests are
written back to back and answered in order (a Kafka broker answers a connection's requests in the
order they came, which keeps a partition's records in the order they were sent), each request at the
highest version both sides support; and the cluster's metadata, the brokers and each partition's
leader.  TLS and SASL (PLAIN, SCRAM) come from the same librdkafka-style settings as the proxy's
other clients, so it reaches pykafkad and Apache Kafka alike."""

from __future__ import annotations

import collections
import logging
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

import wire
from pykafkad.commands.connection import CommandError
from pykafkad.commands.protocol_client import (
    connect_reason,
    connect_with_versions,
    host_port,
    sasl_client,
    tls_context,
)
from pykafkad.replica.broker_link import BrokerLink, BrokerLinkError
from pykafkad.security.sasl_client import SaslClientError
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

API_VERSIONS, METADATA = 18, 3
CLIENT_ID = "pykafkad-rest-proxy"
CONNECT_TIMEOUT_S = 10.0
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
# How long a topic's leaders are trusted before they are asked again (on an error, at once).
METADATA_MAX_AGE_S = 300.0
_LENGTH = struct.Struct(">i")


class Unreachable(Exception):
    """A request could not be answered: the broker is unreachable, its connection failed, or it
    refused the login (``code`` says which, as a Kafka error code)."""

    def __init__(self, message: str, code: int = ErrorCode.NETWORK_EXCEPTION) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class TopicLayout:
    """A topic's partitions and their leaders (-1: none now), or the error Metadata gave."""
    error: int = 0
    leaders: dict[int, int] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)


class _Pending:
    __slots__ = ("correlation_id", "done", "frame", "error")

    def __init__(self, correlation_id: int) -> None:
        self.correlation_id = correlation_id
        self.done = trio.Event()
        self.frame: bytes | None = None
        self.error: str | None = None


class BrokerConnection:
    """One connection to a broker, its requests pipelined; a reader task hands each answer to the
    request it answers.  Any failure closes it, failing every request still waiting."""

    def __init__(self, link: BrokerLink, versions: dict[int, tuple[int, int]], where: str) -> None:
        self._link = link
        self._stream = link.stream
        self.versions = versions
        self.where = where
        self.closed = False
        self._correlation = 1_000_000
        self._waiting: collections.deque[_Pending] = collections.deque()
        self._send_lock = trio.Lock()

    def version(self, api_key: int) -> int:
        ours = wire.supported_versions(api_key)
        theirs = self.versions.get(api_key)
        if theirs is None or max(ours[0], theirs[0]) > min(ours[1], theirs[1]):
            raise Unreachable(f"{self.where} does not support {wire.api_name(api_key)} {ours[0]}-{ours[1]}")
        return min(ours[1], theirs[1])

    async def write(self, api_key: int, version: int, body: dict[str, Any]) -> _Pending:
        """The request written; ``answer`` waits for its answer."""
        if self.closed:
            raise Unreachable(f"the connection to {self.where} is closed")
        self._correlation += 1
        pending = _Pending(self._correlation)
        frame = wire.encode_request(api_key, version, pending.correlation_id, CLIENT_ID, body)
        async with self._send_lock:
            if self.closed:
                raise Unreachable(f"the connection to {self.where} is closed")
            self._waiting.append(pending)
            try:
                await self._stream.send_all(frame)
            except BaseException as e:
                # A frame cut off midway leaves the connection out of step: it is done for.
                with trio.CancelScope(shield=True):
                    await self.close(f"sending to {self.where} failed: {e!r}")
                if isinstance(e, Exception):
                    raise Unreachable(pending.error or str(e)) from None
                raise
        return pending

    async def answer(self, pending: _Pending, api_key: int, version: int, timeout_s: float) -> dict[str, Any]:
        with trio.move_on_after(timeout_s):
            await pending.done.wait()
        if not pending.done.is_set():
            await self.close(f"{self.where} did not answer {wire.api_name(api_key)} within {timeout_s:.0f} s")
        if pending.frame is None:
            raise Unreachable(pending.error or f"no answer from {self.where}")
        try:
            return wire.decode_response(api_key, version, pending.frame)[1]
        except wire.DecodeError as e:
            await self.close(f"{self.where} answered {wire.api_name(api_key)} with a malformed response: {e}")
            raise Unreachable(str(e)) from None

    async def read_answers(self) -> None:
        """Hand each answer to its request, until the connection fails or closes."""
        try:
            while True:
                size = _LENGTH.unpack(await self._link.read_exactly(4))[0]
                if not 4 <= size <= MAX_RESPONSE_BYTES:
                    raise BrokerLinkError(f"an answer of {size} bytes")
                frame = await self._link.read_exactly(size)
                if not self._waiting:
                    raise BrokerLinkError("an answer to no request")
                pending = self._waiting.popleft()
                if _LENGTH.unpack_from(frame)[0] != pending.correlation_id:
                    raise BrokerLinkError(f"answer {_LENGTH.unpack_from(frame)[0]} to request "
                                          f"{pending.correlation_id}")
                pending.frame = frame
                pending.done.set()
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, BrokerLinkError) as e:
            await self.close(f"the connection to {self.where} failed: {e}")

    async def close(self, why: str = "closed") -> None:
        if not self.closed:
            self.closed = True
            log.info("rest proxy: %s", why)
        while self._waiting:
            pending = self._waiting.popleft()
            pending.error = why
            pending.done.set()
        await self._link.aclose()


class NetworkClient:
    """Connections to the cluster's brokers and what Metadata says of its topics.  ``run()`` serves
    the connections' answers."""

    def __init__(self, settings: dict[str, Any]) -> None:
        try:
            self._tls = tls_context(settings)
            self._sasl = sasl_client(settings)
            self._bootstrap = [host_port(a) for a in str(settings.get("bootstrap.servers", "")).split(",")
                               if a.strip()]
        except CommandError as e:
            raise ValueError(str(e)) from None
        if not self._bootstrap:
            raise ValueError("bootstrap.servers names no broker")
        self._brokers: dict[int, tuple[str, int]] = {}
        self._connections: dict[int | None, BrokerConnection] = {}
        self._connecting: dict[int | None, trio.Lock] = collections.defaultdict(trio.Lock)
        self._topics: dict[str, TopicLayout] = {}
        self._nursery: trio.Nursery | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the connections until cancelled; then close them."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            with trio.CancelScope(shield=True):
                for connection in list(self._connections.values()):
                    await connection.close()

    async def request(self, node: int | None, api_key: int, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """``body`` to broker ``node`` (None: any broker), answered; Unreachable if it cannot be."""
        return await (await self.send(node, api_key, body, timeout_s=timeout_s))()

    async def send(self, node: int | None, api_key: int, body: dict[str, Any], max_version: int | None = None,
                   timeout_s: float = 30.0) -> Callable[[], Awaitable[dict[str, Any]]]:
        """``body`` written to broker ``node`` (None: any broker) now, at the highest version both
        support (at most ``max_version``); the function returned waits for its answer.  Requests
        written one after another to a broker are answered in that order."""
        connection = await self._connection(node)
        version = connection.version(api_key)
        if max_version is not None:
            version = min(version, max_version)
        pending = await connection.write(api_key, version, body)

        async def answer() -> dict[str, Any]:
            return await connection.answer(pending, api_key, version, timeout_s)
        return answer

    def layout(self, topic: str) -> TopicLayout | None:
        """What the last Metadata said of ``topic``, while it is fresh."""
        found = self._topics.get(topic)
        if found is not None and time.monotonic() - found.at < METADATA_MAX_AGE_S:
            return found
        return None

    def forget(self, topic: str) -> None:
        """The topic's layout is stale (a leader moved, say): the next ``refresh`` asks again."""
        self._topics.pop(topic, None)

    async def refresh(self, topic: str, timeout_s: float) -> TopicLayout:
        """The topic's partitions and leaders, asked of the cluster now."""
        answer = await self.request(None, METADATA, {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                                                     "include_topic_authorized_operations": False}, timeout_s)
        self._brokers.update({b["node_id"]: (b["host"], b["port"]) for b in answer["brokers"]})
        layout = TopicLayout()
        for found in answer["topics"]:
            if found["name"] != topic:
                continue
            layout.error = found["error_code"]
            layout.leaders = {p["partition_index"]: p["leader_id"] for p in found["partitions"]}
        if layout.error == 0 and not layout.leaders:
            layout.error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        self._topics[topic] = layout
        return layout

    async def _connection(self, node: int | None) -> BrokerConnection:
        found = self._connections.get(node)
        if found is not None and not found.closed:
            return found
        if node is None:
            for known in self._connections.values():
                if not known.closed:
                    return known
        async with self._connecting[node]:
            found = self._connections.get(node)
            if found is not None and not found.closed:
                return found
            connection = await self._connect(node)
            self._connections[node] = connection
            return connection

    async def _connect(self, node: int | None) -> BrokerConnection:
        if self._nursery is None:
            raise Unreachable("the proxy's producer is not running")
        if node is None:
            addresses = list(self._bootstrap)
        elif node in self._brokers:
            addresses = [self._brokers[node]]
        else:
            raise Unreachable(f"broker {node} is not in the cluster's metadata")
        problems = []
        for host, port in addresses:
            where = f"{host}:{port}" if node is None else f"broker {node} ({host}:{port})"
            try:
                link, versions = await connect_with_versions(host, port, CLIENT_ID, CONNECT_TIMEOUT_S, self._tls,
                                                             self._sasl)
            except BrokerLinkError as e:
                if isinstance(e.__cause__, SaslClientError):
                    raise Unreachable(f"{where} refused the login: {e.__cause__}",
                                      ErrorCode.SASL_AUTHENTICATION_FAILED) from None
                problems.append(f"{where}: {connect_reason(e)}")
                continue
            connection = BrokerConnection(link, versions, where)
            self._nursery.start_soon(connection.read_answers)
            return connection
        raise Unreachable(f"cannot reach {', '.join(problems)}")
