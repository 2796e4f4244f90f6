"""Connections from this broker to others, for inter-broker requests: the replica fetcher's
link to a leader, and a pool of links for one-off requests (transaction markers, the leaders'
questions to a transaction coordinator).

Requests go one at a time over one TCP connection, encoded by the same ``wire`` codec the
server uses.  Any failure (refused, reset, a frame that does not decode) closes the link; the
caller backs off and makes a new one.
"""

from __future__ import annotations

import itertools
import ssl
import struct
from typing import Any

import trio

import wire
from pykafkad.security.sasl_client import SaslClient, SaslClientError

_LENGTH = struct.Struct(">i")
MAX_RESPONSE_BYTES = 256 << 20


class BrokerLinkError(Exception):
    """The link failed; it is closed."""


class BrokerLink:
    def __init__(self, stream: trio.abc.Stream, client_id: str) -> None:
        self._stream = stream
        self._client_id = client_id
        self._correlation = itertools.count(1)
        self._buffer = bytearray()

    @classmethod
    async def connect(cls, host: str, port: int, client_id: str, timeout_s: float,
                      ssl_context: ssl.SSLContext | None = None, sasl: SaslClient | None = None) -> BrokerLink:
        """A link to ``host:port``; over TLS with ``ssl_context`` and authenticated with ``sasl``, as
        the inter-broker listener asks."""
        stream: trio.abc.Stream | None = None
        try:
            with trio.fail_after(timeout_s):
                stream = await trio.open_tcp_stream(host, port)
                if ssl_context is not None:
                    stream = trio.SSLStream(stream, ssl_context, server_hostname=host)
                    await stream.do_handshake()
        except (OSError, trio.TooSlowError, trio.BrokenResourceError) as e:
            if stream is not None:
                await trio.aclose_forcefully(stream)
            raise BrokerLinkError(f"cannot connect to {host}:{port}: {e.__cause__ or e}") from e
        link = cls(stream, client_id)
        if sasl is not None:
            try:
                await sasl.authenticate(lambda key, version, body: link.request(key, version, body, timeout_s))
            except SaslClientError as e:
                await link.aclose()
                raise BrokerLinkError(f"authenticating to {host}:{port} failed: {e}") from e
        return link

    @property
    def stream(self) -> trio.abc.Stream:
        """The link's stream, for a caller that takes its requests over once it is set up."""
        return self._stream

    async def request(self, api_key: int, version: int, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        correlation_id = next(self._correlation)
        frame = wire.encode_request(api_key, version, correlation_id, self._client_id, body)
        try:
            with trio.fail_after(timeout_s):
                await self._stream.send_all(frame)
                size = _LENGTH.unpack(await self.read_exactly(4))[0]
                if not 0 <= size <= MAX_RESPONSE_BYTES:
                    raise BrokerLinkError(f"response of {size} bytes")
                answer = await self.read_exactly(size)
            got, decoded = wire.decode_response(api_key, version, answer)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError,
                wire.DecodeError, BrokerLinkError) as e:
            await self.aclose()
            raise BrokerLinkError(f"{type(e).__name__}: {e}") from e
        if got != correlation_id:
            await self.aclose()
            raise BrokerLinkError(f"response {got} to request {correlation_id}")
        return decoded

    async def read_exactly(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream; BrokerLinkError if it closes first."""
        while len(self._buffer) < n:
            chunk = await self._stream.receive_some(max(65536, n - len(self._buffer)))
            if not chunk:
                raise BrokerLinkError("connection closed by the other broker")
            self._buffer += chunk
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await self._stream.aclose()


class BrokerLinkPool:
    """Idle links to other brokers, reused by one-off requests so each does not pay a TCP
    connect; a request takes an idle link (or makes one) and gives it back once answered.  A
    reused link the other broker has closed meanwhile is replaced once."""

    MAX_IDLE_PER_BROKER = 4

    def __init__(self, client_id: str, connect_timeout_s: float = 10.0,
                 ssl_context: ssl.SSLContext | None = None, sasl: SaslClient | None = None) -> None:
        self._client_id = client_id
        self._connect_timeout_s = connect_timeout_s
        self._ssl_context = ssl_context
        self._sasl = sasl
        self._idle: dict[tuple[str, int], list[BrokerLink]] = {}

    async def request(self, host: str, port: int, api_key: int, version: int, body: dict[str, Any],
                      timeout_s: float) -> dict[str, Any]:
        """One request to the broker at ``host:port``; BrokerLinkError when it cannot be answered."""
        idle = self._idle.setdefault((host, port), [])
        if idle:
            try:
                return await self._on(idle.pop(), idle, api_key, version, body, timeout_s)
            except BrokerLinkError:
                pass  # most likely closed by the other broker while idle: one fresh try
        link = await BrokerLink.connect(host, port, self._client_id, self._connect_timeout_s, self._ssl_context,
                                        self._sasl)
        return await self._on(link, idle, api_key, version, body, timeout_s)

    async def _on(self, link: BrokerLink, idle: list[BrokerLink], api_key: int, version: int,
                  body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        try:
            answer = await link.request(api_key, version, body, timeout_s)
        except BaseException:
            await link.aclose()  # cut off mid-request: its stream is out of step
            raise
        if len(idle) < self.MAX_IDLE_PER_BROKER:
            idle.append(link)
        else:
            await link.aclose()
        return answer
