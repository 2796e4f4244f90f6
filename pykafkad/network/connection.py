"""One client connection: read size-prefixed frames, decode, dispatch, answer in request order.

Each connection is one Trio task that handles its requests one after another (as Kafka mutes
a channel while a request is in flight), so responses leave in request order; other
connections are other tasks and never wait on this one.  Anything malformed closes only
this connection, with the reason logged.

A client over one of its quotas (``pykafkad/quota/``) is told so in the response's
``throttle_time_ms`` and the connection reads nothing more for that long, as Kafka mutes its
channel (KIP-219); a client too old to back off by itself gets the response only after it.

A connection on which no bytes move for ``connections.max.idle.ms`` is closed, as Kafka's Selector
expires it (a plain socket by the server's sweep while it waits for a request, a TLS stream by a
cancel scope): bytes received and responses sent are activity; a request being handled (a long-poll
Fetch, a throttled client muted) is not, so one that outlasts the limit loses its response with
the connection, as in Kafka.  A negative value never closes.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import trio

import wire
from pykafkad._rust_log import LogSlice
from pykafkad.handlers import APIS
from pykafkad.handlers.api import RequestContext, SentAlready
from pykafkad.handlers.api_versions import API_VERSIONS_KEY, unsupported_version_response
from pykafkad.metadata.store import ANSWERING_CLIENT, StoreUnavailableError
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.observability import request_timing
from pykafkad.observability.request_timing import RequestTiming
from pykafkad.quota.throttling import client_throttles, throttle_time_ms, withhold_throttled_data
from pykafkad.security.sasl import SaslFailure, SaslSession
from wire.frames import encode_response_segments

if TYPE_CHECKING:
    from pykafkad.broker import Broker
    from pykafkad.config import Listener

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
SASL_HANDSHAKE_KEY, SASL_AUTHENTICATE_KEY = 17, 36
_SIZE_AND_KEY = struct.Struct(">ih")
_IOV_MAX = 1024  # buffers per sendmsg (Linux's IOV_MAX)
Buffer = bytes | bytearray | memoryview | LogSlice
_Read = TypeVar("_Read", bytes, int)
# A cold range of a log file (below the active segment: maybe not in the page cache) is sent in
# pieces this large from a worker thread, so a disk read never stalls the event loop.
_COLD_SENDFILE_CHUNK = 1024 * 1024
PRODUCE_KEY = 0
# Produce and Fetch count their partitions' errors as they answer (with each topic's failed requests).
COUNTS_OWN_ERRORS = frozenset({0, 1})
# Pending responses are sent once they add up to this much, however many Produce requests follow.
_COALESCE_MAX = 256 * 1024
_RECEIVE_CHUNK = 256 * 1024
SEND_ON_CLOSE_TIMEOUT_S = 5.0
# ApiVersions carries the client software's name and version from v3 (KIP-511).
CLIENT_SOFTWARE_FROM = 3
# Bodies at least this large and not yet buffered are received into their own buffer.
_DIRECT_RECEIVE_MIN = 64 * 1024
# Consumed bytes at the front of the receive buffer are dropped once there are this many.
_COMPACT_AFTER = 1024 * 1024
# Each connection's id within this broker (a share session belongs to the connection that opened it).
_CONNECTION_IDS = itertools.count(1)


def _drop_sent(buffers: list[bytes | bytearray | memoryview], sent: int) -> None:
    """Drop from the front of ``buffers`` the ``sent`` bytes a writev or sendmsg took, with the empty
    buffers then at the front."""
    while buffers:
        head = memoryview(buffers[0]).nbytes
        if sent < head:
            if sent:
                buffers[0] = memoryview(buffers[0])[sent:]
            return
        sent -= head
        buffers.pop(0)


class ConnectionClosed(Exception):
    """The connection must close; the message says why (for the log)."""


class _StopReading(Exception):
    """Shutdown ended a plain connection's wait for its next request."""


class IdleExpired(Exception):
    """Nothing moved on the connection for connections.max.idle.ms: it closes, answering nothing more."""


class Connection:
    """A client's socket and the loop serving it."""

    def __init__(self, stream: trio.abc.Stream, broker: Broker, peer: str,
                 listener: Listener | None = None, tls_principal: str | None = None) -> None:
        self.stream = stream
        self.broker = broker
        self.peer = peer
        # The mapped subject of the client's TLS certificate (ssl.principal.mapping.rules), if it gave one.
        self.tls_principal = tls_principal
        # The listener the client connected to: answers name the brokers' endpoints on it.
        self.listener = listener.name if listener is not None else "PLAINTEXT"
        # On a SASL listener, nothing but ApiVersions and the SASL exchange until it succeeds.
        self.sasl: SaslSession | None = None
        if listener is not None and listener.uses_sasl:
            self.sasl = SaslSession(broker.config, listener.name, broker.scram_credential)
        self._buffer = bytearray()
        self._start = 0  # bytes of _buffer already handed out as frames
        # Cancelled at shutdown to close a connection waiting for its next request; its deadline
        # is the idle expiry (connections.max.idle.ms after the last bytes moved).
        self.idle_scope = trio.CancelScope()
        # The same expiry while a response is being sent to a client that does not read it.
        self._send_scope = trio.CancelScope()
        max_idle_ms = broker.config["connections.max.idle.ms"]
        self.max_idle_s = max_idle_ms / 1000 if max_idle_ms >= 0 else math.inf
        self._last_active = trio.current_time()
        # Set when the connection closed for idleness (as Kafka's ChannelState.EXPIRED).
        self.idle_expired = False
        self.max_frame = broker.config["socket.request.max.bytes"]
        self.quotas = broker.client_quotas
        # Set by _handle when the request put its client over a quota: how long to mute, and
        # whether the response goes out first (the client backs off itself) or after.
        self._throttle_ms = 0
        self._respond_before_throttle = True
        # The times of the requests whose responses wait in the send buffer (observed once sent).
        self._timings: list[RequestTiming] = []
        self.timed = bool(broker.config["metrics.listener"])
        # A plain socket takes record sets straight from the segment files (sendfile); TLS cannot,
        # it encrypts a copy.
        self.zero_copy = getattr(stream, "socket", None) is not None
        self.client_software: tuple[str, str] | None = None
        # A plain socket's file descriptor: a response goes out with one writev when the socket
        # takes it all at once, as it nearly always does, without a cancel scope for the idle expiry.
        self._fd = stream.socket.fileno() if self.zero_copy else -1
        # Set while the plain socket's task waits for the client's bytes (what expire_if_idle ends).
        self._parked = False
        self.id = next(_CONNECTION_IDS)

    def _idle_deadline(self) -> float:
        return self._last_active + self.max_idle_s

    def _touch(self) -> None:
        """Bytes moved: the idle expiry starts again from now (Kafka's IdleExpiryManager.update).
        The cancel scopes' deadlines follow only when a frame or a response takes more than one
        read or write (``_still_moving``): moving them at every read and write cost about 8% of
        a small request's CPU (Trio files each new deadline in a heap)."""
        self._last_active = trio.current_time()

    def _still_moving(self, scope: trio.CancelScope) -> None:
        """A frame or response is part way through and bytes just moved: its wait expires
        connections.max.idle.ms from now."""
        scope.deadline = self._idle_deadline()

    def _expired(self) -> bool:
        return trio.current_time() >= self._idle_deadline()

    def _buffered(self) -> int:
        return len(self._buffer) - self._start

    def _take(self, count: int) -> bytearray:
        """The next ``count`` buffered bytes, as their own buffer (one copy, or none if they are all of it)."""
        start = self._start
        if start == 0 and count == len(self._buffer):
            data, self._buffer = self._buffer, bytearray()
            return data
        data = self._buffer[start:start + count]
        self._start = start + count
        if self._start == len(self._buffer):
            self._buffer.clear()
            self._start = 0
        elif self._start > _COMPACT_AFTER:
            del self._buffer[:self._start]
            self._start = 0
        return data

    async def _receive_some(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` from the client (b"" at EOF).  A plain socket is read directly: the
        task yields once per read (trio's receive_some yields twice), and its idle expiry is the server's
        sweep (``expire_if_idle``), not a cancel scope per request (together about a tenth of a
        small request's CPU)."""
        if self._fd < 0:
            return await self.stream.receive_some(max_bytes)
        return await self._read_plain(lambda: os.read(self._fd, max_bytes))

    async def _read_plain(self, read: Callable[[], _Read]) -> _Read:
        """``read()`` (a non-blocking read of the plain socket) once the socket has bytes; the task
        yields once either way."""
        waited = False
        while True:
            try:
                got = read()
            except BlockingIOError:
                await self._wait_readable()
                waited = True
                continue
            except OSError as e:
                raise trio.BrokenResourceError(str(e)) from e
            if not waited:
                # A client whose requests are always there already (pipelined) must not keep the
                # event loop from the other connections.
                await trio.lowlevel.checkpoint()
            return got

    async def _wait_readable(self) -> None:
        """Wait for the client's next bytes on the plain socket.  ``expire_if_idle`` and
        ``stop_waiting`` end the wait (with trio's notify_closing) while ``_parked`` says it runs."""
        if self.broker.shutting_down.is_set():
            raise _StopReading  # stop_waiting has run already: nothing would end this wait
        self._parked = True
        try:
            await trio.lowlevel.wait_readable(self._fd)
        except trio.ClosedResourceError:
            if self.broker.shutting_down.is_set():
                raise _StopReading from None
            if self._expired():
                raise IdleExpired from None
            raise
        finally:
            self._parked = False

    def expire_if_idle(self, now: float) -> None:
        """Close a plain connection that waits for a request and on which nothing moved for
        connections.max.idle.ms (the server sweeps its connections with this).  One woken
        just as the client's bytes arrived reads them and goes on: it was not idle."""
        if self._parked and now >= self._idle_deadline():
            trio.lowlevel.notify_closing(self._fd)

    def stop_waiting(self) -> None:
        """At shutdown: a connection waiting for its next request closes now."""
        if self._fd >= 0:
            if self._parked:
                trio.lowlevel.notify_closing(self._fd)
        else:
            self.idle_scope.cancel()

    async def _fill(self, count: int) -> bool:
        """Receive until ``count`` bytes are buffered; False on a clean EOF with nothing buffered."""
        while self._buffered() < count:
            chunk = await self._receive_some(max(_RECEIVE_CHUNK, count - self._buffered()))
            self._touch()
            if not chunk:
                if self._buffered():
                    raise ConnectionClosed(
                        f"truncated frame: connection closed with {self._buffered()} of {count} bytes"
                    )
                return False
            self._buffer += chunk
            if self._buffered() < count:
                if self._fd < 0:
                    self._still_moving(self.idle_scope)
        return True

    async def _receive_body(self, size: int) -> bytearray:
        """A frame body of ``size`` bytes.

        A body larger than what is buffered is received straight into a buffer of its own size
        (``recv_into``), so a large produce request is copied once, not once per chunk and again
        when it is cut out of the receive buffer.
        """
        buffered = self._buffered()
        sock = getattr(self.stream, "socket", None)
        if buffered >= size or size < _DIRECT_RECEIVE_MIN or sock is None:
            if not await self._fill(size):
                raise ConnectionClosed(f"truncated frame: closed before any of its {size} bytes")
            return self._take(size)
        body = bytearray(size)
        view = memoryview(body)
        view[:buffered] = memoryview(self._buffer)[self._start:]
        self._buffer.clear()
        self._start = 0
        got = buffered
        try:
            while got < size:
                n = await self._receive_into(sock, view[got:])
                self._touch()
                if n == 0:
                    raise ConnectionClosed(f"truncated frame: connection closed with {got} of {size} bytes")
                got += n
                if self._fd < 0:
                    self._still_moving(self.idle_scope)
        except OSError as e:
            raise trio.BrokenResourceError(str(e)) from e
        finally:
            view.release()
        return body

    async def _receive_into(self, sock: trio.socket.SocketType, view: memoryview) -> int:
        if self._fd < 0:
            return await sock.recv_into(view, len(view))
        return await self._read_plain(lambda: os.readv(self._fd, [view]))

    async def _next_frame(self) -> bytearray | None:
        if not await self._fill(4):
            return None
        (size,) = _SIZE.unpack_from(self._buffer, self._start)
        self._start += 4
        if size < 0 or size > self.max_frame:
            raise ConnectionClosed(
                f"frame of {size} bytes is larger than socket.request.max.bytes={self.max_frame}"
                if size > 0 else f"invalid frame size {size}"
            )
        return await self._receive_body(size)

    async def _next_plain_frame(self) -> bytearray | None:
        """The next request on a plain socket; None at EOF or when shutdown stopped the wait."""
        try:
            return await self._next_frame()
        except _StopReading:
            return None

    async def _next_tls_frame(self) -> bytearray | None:
        """The next request on a TLS stream, under a cancel scope whose deadline is the idle expiry."""
        self.idle_scope.deadline = self._idle_deadline()
        frame = None
        with self.idle_scope:
            frame = await self._next_frame()
        if self.idle_scope.cancelled_caught and not self.broker.shutting_down.is_set():
            raise IdleExpired
        if self.idle_scope.cancelled_caught:
            return None
        self.idle_scope = trio.CancelScope()
        return frame

    async def _send(self, buffers: list[Buffer]) -> None:
        """Write ``buffers`` in order: one buffer with send_all, several with sendmsg (no joining
        copy), a LogSlice (records in a segment file) with sendfile, never through this process."""
        sock = getattr(self.stream, "socket", None)
        if sock is None:
            for b in buffers:
                await self.stream.send_all(b.read() if isinstance(b, LogSlice) else b)
                self._touch()
                self._still_moving(self._send_scope)
            return
        if len(buffers) == 1 and not isinstance(buffers[0], LogSlice):
            await self.stream.send_all(buffers[0])
            return
        try:
            views: list[memoryview] = []
            for b in buffers:
                if isinstance(b, LogSlice):
                    await self._send_views(sock, views)
                    views = []
                    await self._send_file_range(sock, b)
                else:
                    views.append(memoryview(b))
            await self._send_views(sock, views)
        except OSError as e:
            raise trio.BrokenResourceError(str(e)) from e

    async def _send_views(self, sock: trio.socket.SocketType, views: list[memoryview]) -> None:
        while views:
            sent = await sock.sendmsg(views[:_IOV_MAX])
            self._touch()
            self._still_moving(self._send_scope)
            _drop_sent(views, sent)

    async def _send_file_range(self, sock: trio.socket.SocketType, piece: LogSlice) -> None:
        """sendfile the range, waiting for the socket when its buffer is full; a cold range goes from
        a worker thread.  A file that ends early (a follower's truncation raced the response) breaks
        the connection: the frame's length is already sent, and the client reconnects."""
        out_fd, in_fd = sock.fileno(), piece.fileno()
        offset, left = piece.position, len(piece)
        while left:
            try:
                if piece.cold:
                    sent = await trio.to_thread.run_sync(os.sendfile, out_fd, in_fd, offset,
                                                         min(left, _COLD_SENDFILE_CHUNK))
                else:
                    sent = os.sendfile(out_fd, in_fd, offset, left)
            except BlockingIOError:
                await trio.lowlevel.wait_writable(sock)
                continue
            if sent == 0:
                raise trio.BrokenResourceError(f"the log file ended {left} bytes short of a fetch response")
            offset += sent
            left -= sent
            self._touch()
            self._still_moving(self._send_scope)
        metrics.SENDFILE_BYTES.inc(len(piece))
        await trio.lowlevel.checkpoint()

    def _send_now(self, buffers: list[Buffer]) -> bool:
        """On a plain socket, write what the socket takes at once (one writev, never waiting): True
        when that was all of ``buffers``, else False with what went dropped from ``buffers``."""
        if self._fd < 0 or len(buffers) > _IOV_MAX or any(isinstance(b, LogSlice) for b in buffers):
            return False
        try:
            sent = os.writev(self._fd, buffers)  # type: ignore[arg-type]
        except BlockingIOError:
            return False
        except OSError as e:
            raise trio.BrokenResourceError(str(e)) from e
        self._touch()
        _drop_sent(buffers, sent)  # type: ignore[arg-type]
        return not buffers

    def _produce_is_next(self) -> bool:
        """Whether a whole Produce request is already buffered, to be handled without waiting."""
        start = self._start
        if len(self._buffer) - start < 6:
            return False
        size, api_key = _SIZE_AND_KEY.unpack_from(self._buffer, start)
        return api_key == PRODUCE_KEY and len(self._buffer) - start >= 4 + size

    async def serve(self) -> None:
        # Responses to pipelined Produce requests that are already buffered go out in one send
        # (a producer with several requests in flight gets them in one write, not one each); any
        # other next request, or none buffered yet, sends what is pending first, so nothing waits
        # behind a long poll or for the client.
        pending: list[Buffer] = []
        pending_bytes = 0
        # This task answers a client: a metadata store call made for it does not wait forever.
        ANSWERING_CLIENT.set(True)

        async def flush() -> None:
            nonlocal pending_bytes
            if pending:
                send_started = time.perf_counter()
                if not self._send_now(pending):
                    # A client that reads nothing for connections.max.idle.ms loses the connection.
                    self._send_scope = trio.CancelScope(deadline=self._idle_deadline())
                    with self._send_scope:
                        await self._send(pending)
                    if self._send_scope.cancelled_caught:
                        raise IdleExpired
                    self._touch()
                sent = time.perf_counter()
                for timing in self._timings:
                    timing.observe(send_started, sent)
                self._timings.clear()
                pending.clear()
                pending_bytes = 0

        try:
            try:
                while not self.broker.shutting_down.is_set():
                    frame = await self._next_plain_frame() if self._fd >= 0 else await self._next_tls_frame()
                    if frame is None:
                        return
                    received = time.perf_counter() if self.timed else 0.0
                    if self.sasl is not None and self.sasl.raw_tokens and not self.sasl.authenticated:
                        # After SaslHandshake v0 the client's tokens are bare frames, answered in kind.
                        try:
                            token = self.sasl.authenticate(bytes(frame))
                        except SaslFailure as e:
                            metrics.FAILED_AUTHENTICATIONS.labels(self.listener).inc()
                            raise ConnectionClosed(f"SASL authentication failed: {e}") from None
                        except Exception as e:  # noqa: BLE001 - a bug on this path must cost one connection
                            log.exception("SASL token from %s failed", self.peer)
                            raise ConnectionClosed(f"internal error in SASL authentication: {e!r}") from None
                        if self.sasl.authenticated:
                            self.sasl.raw_tokens = False
                        await flush()
                        await self._send([_SIZE.pack(len(token)) + token])
                        continue
                    response = await self._handle(frame, received)
                    if self._expired():
                        # Kafka closed this connection while the request was handled (nothing
                        # moved on it meanwhile): its response goes nowhere.
                        self.idle_expired = True
                        return
                    if response is not None:
                        pending += response
                        pending_bytes += sum(len(b) for b in response)
                    if self._throttle_ms:
                        throttle_s, self._throttle_ms = self._throttle_ms / 1000, 0
                        if self._respond_before_throttle:
                            await flush()
                        # Muted: the next request is not read until the throttle time is over.
                        # Muted is not active: the idle expiry runs on meanwhile.
                        with trio.move_on_at(min(trio.current_time() + throttle_s, self._idle_deadline())):
                            await self.broker.shutting_down.wait()
                        if self._expired():
                            raise IdleExpired
                        await flush()
                    elif pending_bytes >= _COALESCE_MAX or not self._produce_is_next():
                        await flush()
                    if self.sasl is not None and self.sasl.failed:
                        # Kafka holds a failed client back this long before closing, to slow guessing.
                        await flush()
                        await trio.sleep(self.broker.config["connection.failed.authentication.delay.ms"] / 1000)
                        log.info("closing connection from %s: SASL authentication failed", self.peer)
                        return
            except IdleExpired:
                # Kafka has closed the channel by now: nothing more goes out on it.
                self.idle_expired = True
                pending.clear()
                raise
            finally:
                # Whatever was handled is answered, even when the connection then closes: a
                # Produce that was appended must not lose its acknowledgement to a later bad frame.
                with trio.CancelScope(shield=True), trio.move_on_after(SEND_ON_CLOSE_TIMEOUT_S):
                    await flush()
        except IdleExpired:
            log.debug("closing connection from %s: idle for more than connections.max.idle.ms=%s",
                      self.peer, self.broker.config["connections.max.idle.ms"])
        except ConnectionClosed as e:
            log.warning("closing connection from %s: %s", self.peer, e)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            log.debug("connection from %s dropped", self.peer)
        finally:
            metrics.CONNECTIONS_CLOSED.labels(self.listener).inc()
            self.broker.connection_closed(self.id)
            with trio.CancelScope(shield=True):
                await self.stream.aclose()

    async def _handle(self, frame: bytearray, received: float) -> list[Buffer] | None:
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
                return [unsupported_version_response(header.correlation_id)]
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
        if (self.sasl is not None and not self.sasl.authenticated
                and header.api_key not in (API_VERSIONS_KEY, SASL_HANDSHAKE_KEY, SASL_AUTHENTICATE_KEY)):
            raise ConnectionClosed(f"unexpected {api.name} request before SASL authentication")
        if (self.sasl is not None and self.sasl.expired and not self.sasl.reauthenticating
                and header.api_key not in (SASL_HANDSHAKE_KEY, SASL_AUTHENTICATE_KEY)):
            # KIP-368: the client did not re-authenticate within connections.max.reauth.ms.
            raise ConnectionClosed(f"{api.name} request after the SASL session of User:{self.sasl.principal} "
                                   "expired (connections.max.reauth.ms)")
        if header.api_key == API_VERSIONS_KEY and version >= CLIENT_SOFTWARE_FROM:
            # KIP-511: telemetry subscriptions match clients by it (client_telemetry.py).
            self.client_software = (body["client_software_name"], body["client_software_version"])
        ctx = RequestContext(header.api_key, version, header.correlation_id, header.client_id, self.peer,
                             self.listener, self.sasl, self.tls_principal, self.zero_copy, self.client_software,
                             self.id, self._fd)
        quotas = self.quotas
        timer = quotas.task_timer if quotas.enabled and quotas.times_requests() else None
        timed = timer.start() if timer is not None else None
        # Request metrics only where someone can scrape them (metrics.listener): their few
        # microseconds per request are not paid for nothing.
        timing = RequestTiming(api.name, received) if self.timed else None
        if timing is not None:
            request_timing.begin(timing)
            metrics.requests_of(api.name, version).inc()
        try:
            result = await api.handle(self.broker, ctx, body)
        except trio.Cancelled:
            raise
        except StoreUnavailableError as e:
            # A handler with no error code of its own for it: the client retries on another connection.
            raise ConnectionClosed(f"{api.name} needs the metadata store, which is unavailable: {e}") from None
        except Exception as e:  # noqa: BLE001 - a handler bug must cost one connection, not the broker
            log.exception("%s v%d from %s failed", api.name, version, self.peer)
            raise ConnectionClosed(f"internal error handling {api.name}: {e!r}") from None
        finally:
            handler_seconds = timer.stop(timed) if timer is not None and timed is not None else None
        if isinstance(result, SentAlready):
            # A parked fetch, answered on this socket by the log itself (replica/delayed_fetch.py).
            self._touch()
            if timing is not None:
                timing.handled = time.perf_counter()
                timing.observe(timing.handled, timing.handled)
            return [result.unsent] if result.unsent else None
        if timing is not None:
            timing.handled = time.perf_counter()
            if result is None:
                timing.observe(timing.handled, timing.handled)  # acks=0: nothing to send
            else:
                self._timings.append(timing)
                if header.api_key not in COUNTS_OWN_ERRORS:
                    request_timing.count_errors(api.name, result)
        # Large record sets (Fetch) stay their own buffers on the way to the socket: not copied.
        segments = None if result is None else encode_response_segments(
            header.api_key, version, header.correlation_id, result)
        if quotas.enabled:
            response_bytes = 0 if segments is None else sum(len(b) for b in segments)
            throttle = throttle_time_ms(quotas, ctx.principal, ctx.client_id, header.api_key, version, body,
                                        len(frame), response_bytes, handler_seconds)
            if result is not None:
                # A quota the handler applied itself (controller_mutation_rate) holds the client back too.
                throttle = max(throttle, result.get("throttle_time_ms") or 0)
            if throttle > 0:
                self._throttle_ms = throttle
                self._respond_before_throttle = client_throttles(header.api_key, version)
                if result is not None and "throttle_time_ms" in result:
                    result["throttle_time_ms"] = max(result["throttle_time_ms"], throttle)
                    withhold_throttled_data(header.api_key, result)
                    segments = encode_response_segments(header.api_key, version, header.correlation_id, result)
        return segments
