"""A connection from this broker to another, for inter-broker requests (the replica fetcher's).

Requests go one at a time over one TCP connection, encoded by the same ``wire`` codec the
server uses.  Any failure (refused, reset, a frame that does not decode) closes the link; the
caller backs off and makes a new one.
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

import trio

import wire

_LENGTH = struct.Struct(">i")
MAX_RESPONSE_BYTES = 256 << 20


class BrokerLinkError(Exception):
    """The link failed; it is closed."""


class BrokerLink:
    def __init__(self, stream: trio.SocketStream, client_id: str) -> None:
        self._stream = stream
        self._client_id = client_id
        self._correlation = itertools.count(1)
        self._buffer = bytearray()

    @classmethod
    async def connect(cls, host: str, port: int, client_id: str, timeout_s: float) -> BrokerLink:
        try:
            with trio.fail_after(timeout_s):
                stream = await trio.open_tcp_stream(host, port)
        except (OSError, trio.TooSlowError) as e:
            raise BrokerLinkError(f"cannot connect to {host}:{port}: {e}") from e
        return cls(stream, client_id)

    async def request(self, api_key: int, version: int, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        correlation_id = next(self._correlation)
        frame = wire.encode_request(api_key, version, correlation_id, self._client_id, body)
        try:
            with trio.fail_after(timeout_s):
                await self._stream.send_all(frame)
                size = _LENGTH.unpack(await self._read(4))[0]
                if not 0 <= size <= MAX_RESPONSE_BYTES:
                    raise BrokerLinkError(f"response of {size} bytes")
                answer = await self._read(size)
            got, decoded = wire.decode_response(api_key, version, answer)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError,
                wire.DecodeError, BrokerLinkError) as e:
            await self.aclose()
            raise BrokerLinkError(f"{type(e).__name__}: {e}") from e
        if got != correlation_id:
            await self.aclose()
            raise BrokerLinkError(f"response {got} to request {correlation_id}")
        return decoded

    async def _read(self, n: int) -> bytes:
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
