"""One client connection: read size-prefixed frames, decode, dispatch, answer in request order.

Each connection is one Trio task that handles its requests one after another (as Kafka mutes
a channel while a request is in flight), so responses leave in request order; other
connections are other tasks and never wait on this one.  Anything malformed closes only
this connection, with the reason logged.
"""

from __future__ import annotations

import logging
import struct
from typing import TYPE_CHECKING

import trio

import wire
from pykafkad.handlers import APIS
from pykafkad.handlers.api import RequestContext
from pykafkad.handlers.api_versions import API_VERSIONS_KEY, unsupported_version_response

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_RECEIVE_CHUNK = 256 * 1024


class ConnectionClosed(Exception):
    """The connection must close; the message says why (for the log)."""


class Connection:
    """A client's socket and the loop serving it."""

    def __init__(self, stream: trio.SocketStream, broker: Broker, peer: str) -> None:
        self.stream = stream
        self.broker = broker
        self.peer = peer
        self._buffer = bytearray()
        self.idle_scope = trio.CancelScope()
        self.max_frame = broker.config["socket.request.max.bytes"]

    async def _receive_exactly(self, count: int) -> bytes | None:
        """Bytes until ``count`` are buffered; None on a clean EOF before any of them."""
        while len(self._buffer) < count:
            chunk = await self.stream.receive_some(max(_RECEIVE_CHUNK, count - len(self._buffer)))
            if not chunk:
                if self._buffer:
                    raise ConnectionClosed(
                        f"truncated frame: connection closed with {len(self._buffer)} of {count} bytes"
                    )
                return None
            self._buffer += chunk
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    async def _next_frame(self) -> bytes | None:
        size_bytes = await self._receive_exactly(4)
        if size_bytes is None:
            return None
        (size,) = _SIZE.unpack(size_bytes)
        if size < 0 or size > self.max_frame:
            raise ConnectionClosed(
                f"frame of {size} bytes is larger than socket.request.max.bytes={self.max_frame}"
                if size > 0 else f"invalid frame size {size}"
            )
        frame = await self._receive_exactly(size)
        if frame is None:
            raise ConnectionClosed(f"truncated frame: closed before any of its {size} bytes")
        return frame

    async def serve(self) -> None:
        try:
            while not self.broker.shutting_down.is_set():
                frame = None
                with self.idle_scope:
                    frame = await self._next_frame()
                if self.idle_scope.cancelled_caught or frame is None:
                    return
                self.idle_scope = trio.CancelScope()
                response = await self._handle(frame)
                if response is not None:
                    await self.stream.send_all(response)
        except ConnectionClosed as e:
            log.warning("closing connection from %s: %s", self.peer, e)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            log.debug("connection from %s dropped", self.peer)
        finally:
            with trio.CancelScope(shield=True):
                await self.stream.aclose()

    async def _handle(self, frame: bytes) -> bytes | None:
        try:
            header = wire.decode_request_header(frame)
        except wire.DecodeError as e:
            raise ConnectionClosed(f"unreadable request header: {e}") from None
        api = APIS.get(header.api_key)
        version = header.api_version
        if api is None:
            raise ConnectionClosed(f"unknown API key {header.api_key}")
        if not api.min_version <= version <= api.max_version:
            if header.api_key == API_VERSIONS_KEY:
                # KIP-511: a newer client learns what we support from a v0 body, and stays connected.
                return unsupported_version_response(header.correlation_id)
            raise ConnectionClosed(
                f"{api.name} v{version} is not supported (supported: v{api.min_version}-v{api.max_version})"
            )
        if api.reject_below is not None and version < api.reject_below:
            raise ConnectionClosed(
                f"{api.name} v{version} is no longer supported; use v{api.reject_below} or newer"
            )
        try:
            body = wire.decode_request(header.api_key, version, frame, header.body_offset)
        except (wire.DecodeError, wire.UnsupportedVersion) as e:
            raise ConnectionClosed(f"malformed {api.name} v{version} request: {e}") from None
        ctx = RequestContext(header.api_key, version, header.correlation_id, header.client_id, self.peer)
        try:
            result = await api.handle(self.broker, ctx, body)
        except trio.Cancelled:
            raise
        except Exception as e:  # noqa: BLE001 - a handler bug must cost one connection, not the broker
            log.exception("%s v%d from %s failed", api.name, version, self.peer)
            raise ConnectionClosed(f"internal error handling {api.name}: {e!r}") from None
        if result is None:
            return None
        return wire.encode_response(header.api_key, version, header.correlation_id, result)
