"""The Trio server: start-up order, listeners, one task per connection, and graceful shutdown.

Start-up binds every listener first, then locks the log dirs, and only then loads the broker:
a listener that cannot be bound or a log dir another broker holds stops the process with one
line (``StartupError``) before anything is written to a data directory.

Shutdown (SIGTERM/SIGINT) stops accepting, lets in-flight requests finish (long-polls answer
early), closes idle connections, then flushes and closes every log and leaves the clean-shutdown
marker so the next start skips recovery.
"""

from __future__ import annotations

import errno
import logging
import signal
import socket
import ssl
import time
from collections.abc import AsyncIterator

import trio

from pykafkad.broker import Broker
from pykafkad.config import BrokerConfig, ConfigError, Listener, parse_http_listener, parse_metrics_listener
from pykafkad.errors import StartupError
from pykafkad.log.dir_lock import LogDirInUse, LogDirLocks
from pykafkad.network import tls
from pykafkad.network.connection import Connection
from pykafkad.network.connection_quotas import ConnectionQuotas
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.security.principal_mapping import PrincipalMappingError, map_name, subject_name
from pykafkad.security.sasl_client import inter_broker_sasl

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 30.0
# A TLS client that has not finished its handshake by then is dropped.
TLS_HANDSHAKE_TIMEOUT_S = 10.0

# Bind failures in words an operator acts on; others use the system's own text.
_BIND_PROBLEMS = {
    errno.EADDRINUSE: "address already in use",
    errno.EADDRNOTAVAIL: "address not available on this machine",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
}


def _bind_problem(e: OSError) -> str:
    if isinstance(e, socket.gaierror):
        return f"cannot resolve the host ({e.strerror})"
    return _BIND_PROBLEMS.get(e.errno or 0, (e.strerror or str(e)).lower())


async def bind_listeners(listeners: list[Listener]) -> list[tuple[Listener, trio.socket.SocketType]]:
    """Bind a socket for every address of every listener, or raise StartupError naming the one
    that failed.  The sockets do not listen yet: until ``start_listening``, after the broker is
    loaded, a client is refused at once rather than left waiting on a broker that cannot answer."""
    bound: list[tuple[Listener, trio.socket.SocketType]] = []
    try:
        for spec in listeners:
            try:
                bound += [(spec, sock) for sock in await _bind(spec)]
            except OSError as e:
                raise StartupError(f"listener {_name(spec)}: {_bind_problem(e)}") from e
    except BaseException:
        for _, sock in bound:
            sock.close()
        raise
    return bound


def _name(spec: Listener) -> str:
    host = f"[{spec.host}]" if ":" in spec.host else spec.host
    return f"{spec.name}://{host}:{spec.port}"


async def _bind(spec: Listener) -> list[trio.socket.SocketType]:
    """One listener's sockets, bound as trio.open_tcp_listeners binds them (IPv6 sockets v6-only)."""
    addresses = await trio.socket.getaddrinfo(spec.host or None, spec.port, type=socket.SOCK_STREAM,
                                              flags=socket.AI_PASSIVE)
    bound: list[trio.socket.SocketType] = []
    unsupported: OSError | None = None
    try:
        for family, type_, proto, _, sockaddr in addresses:
            try:
                sock = trio.socket.socket(family, type_, proto)
            except OSError as e:
                # A host without IPv6 (or IPv4) still serves the other family.
                if e.errno != errno.EAFNOSUPPORT:
                    raise
                unsupported = e
                continue
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            await sock.bind(sockaddr)
    except BaseException:
        for sock in bound:
            sock.close()
        raise
    if not bound and unsupported is not None:
        raise unsupported
    return bound


def start_listening(bound: list[tuple[Listener, trio.socket.SocketType]]) -> list[tuple[Listener, trio.SocketListener]]:
    """Let clients in: the broker is loaded and serves from here on.  StartupError if another
    process took the address since it was bound (both bound it with SO_REUSEADDR)."""
    for spec, sock in bound:
        try:
            sock.listen(socket.SOMAXCONN)
        except OSError as e:
            raise StartupError(f"listener {_name(spec)}: {_bind_problem(e)}") from e
    return [(spec, trio.SocketListener(sock)) for spec, sock in bound]


def certificate_principal(stream: trio.SSLStream, config: BrokerConfig) -> str | None:
    """``User:<mapped subject>`` of the client's verified certificate, None without one."""
    name = subject_name(stream.getpeercert())
    return None if name is None else f"User:{map_name(config.principal_rules, name)}"


class Server:
    """Listeners and connections of one broker process."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.connections: set[Connection] = set()
        self.accept_scope = trio.CancelScope()
        # Cancelled by a signal that comes before the broker serves: start-up stops where it is.
        self.start_scope = trio.CancelScope()
        # The connections' nursery: a signal during the shutdown drain cancels it.
        self.drain_scope: trio.CancelScope | None = None
        self.broker: Broker | None = None
        self.bound: list[tuple[str, int]] = []
        self.quotas = ConnectionQuotas(config)
        # The SSL listeners' context, made at start.
        self.tls: ssl.SSLContext | None = None
        # Accepting clients (what /readyz waits for).
        self.listening = False

    def connection_counts(self) -> dict[str, int]:
        """Open client connections per listener name."""
        counts = {lst.name: 0 for lst in self.config.listeners}
        for conn in self.connections:
            counts[conn.listener] = counts.get(conn.listener, 0) + 1
        return counts

    async def _serve_connection(self, stream: trio.SocketStream, broker: Broker, spec: Listener,
                                host: str, peer: str) -> None:
        """Serve an admitted connection (counted by the connection quotas until it ends)."""
        try:
            await self._serve_admitted(stream, broker, spec, peer)
        finally:
            self.quotas.release(host)

    async def _serve_admitted(self, stream: trio.SocketStream, broker: Broker, spec: Listener, peer: str) -> None:
        served: trio.abc.Stream = stream
        tls_principal = None
        if spec.uses_tls:
            assert self.tls is not None
            served = trio.SSLStream(stream, self.tls, server_side=True)
            # Each connection shakes hands in its own task, so a slow or silent client holds only itself.
            try:
                with trio.fail_after(TLS_HANDSHAKE_TIMEOUT_S):
                    await served.do_handshake()
            except (trio.BrokenResourceError, trio.TooSlowError, OSError) as e:
                cause = e.__cause__ or e
                metrics.FAILED_AUTHENTICATIONS.labels(spec.name).inc()
                log.info("TLS handshake with %s on %s failed: %s", peer, spec.name,
                         "timed out" if isinstance(e, trio.TooSlowError) else cause)
                await trio.aclose_forcefully(served)
                return
            try:
                tls_principal = certificate_principal(served, broker.config)
            except PrincipalMappingError as e:
                log.info("TLS client %s on %s refused: %s", peer, spec.name, e)
                await trio.aclose_forcefully(served)
                return
        conn = Connection(served, broker, peer, spec, tls_principal)
        self.connections.add(conn)
        try:
            await conn.serve()
        finally:
            self.connections.discard(conn)

    async def _accept_loop(self, spec: Listener, listener: trio.SocketListener, broker: Broker,
                           nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                if spec.name != self.config.inter_broker_listener.name:
                    # At max.connections, clients wait in the backlog; brokers never do.
                    await self.quotas.wait_for_slot()
                try:
                    stream = await listener.accept()
                except OSError as e:
                    # Out of file descriptors and the like: wait and keep serving existing clients.
                    log.error("accept failed: %s", e)
                    await trio.sleep(0.1)
                    continue
                try:
                    host, port = stream.socket.getpeername()[:2]
                    peer = f"{host}:{port}"
                except OSError:
                    host, peer = "", "unknown peer"
                if not self.quotas.admit(host):
                    log.info("closing connection from %s: more than %d connections from %s "
                             "(max.connections.per.ip)", peer, self.quotas.limit_for(host), host)
                    await trio.aclose_forcefully(stream)
                    continue
                nursery.start_soon(self._serve_connection, stream, broker, spec, host, peer)

    async def run(self, task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED) -> None:
        """Start (bind, lock, load), serve until a signal or ``stop``, then shut down cleanly.

        Raises StartupError, before touching any data directory, when a listener cannot be bound
        or a log dir is locked by another broker.  The listeners accept connections only once the
        broker is loaded, as before.
        """
        # Signals are caught from the first moment: one that comes while the broker binds and loads
        # stops the start-up cleanly (it killed the process before).
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._on_signals, signals)
                with self.start_scope:
                    await self._run(task_status)
                nursery.cancel_scope.cancel()

    async def _run(self, task_status: trio.TaskStatus[Server]) -> None:
        started = time.monotonic()
        try:
            # Every context and credential the config calls for, made now: a bad setting stops the start.
            if any(lst.uses_tls for lst in self.config.listeners):
                self.tls = tls.server_context(self.config)
            tls.inter_broker_context(self.config)
            inter_broker_sasl(self.config)
        except ConfigError as e:
            raise StartupError(str(e)) from e
        sockets = await bind_listeners(self.config.listeners)
        http_address = parse_metrics_listener(self.config["metrics.listener"])
        http_socket = None
        if http_address is not None:
            # Imported only when asked for: hypercorn adds a tenth of a second to every start.
            from pykafkad.observability import http_endpoint
            try:
                http_socket = http_endpoint.bind(http_address)
            except OSError as e:
                for _, sock in sockets:
                    sock.close()
                raise StartupError(f"metrics.listener={self.config['metrics.listener']}: {_bind_problem(e)}") from e
        registry_address = parse_metrics_listener(self.config["schema.registry.listener"])
        registry_socket = None
        if registry_address is not None:
            # Imported only when asked for: the registry brings librdkafka, Starlette and fastavro.
            from pykafkad.schema_registry import server as registry_server
            try:
                registry_socket = registry_server.bind(*registry_address)
            except OSError as e:
                for _, sock in sockets:
                    sock.close()
                if http_socket is not None:
                    http_socket.close()
                raise StartupError(f"schema.registry.listener={self.config['schema.registry.listener']}: "
                                   f"{_bind_problem(e)}") from e
        rest_address = parse_http_listener(self.config["rest.listener"])
        rest_socket = None
        if rest_address is not None:
            from pykafkad.schema_registry.server import bind as bind_http
            try:
                rest_socket = bind_http(*rest_address[1:])
            except OSError as e:
                for _, sock in sockets:
                    sock.close()
                for extra in (http_socket, registry_socket):
                    if extra is not None:
                        extra.close()
                raise StartupError(f"rest.listener={self.config['rest.listener']}: {_bind_problem(e)}") from e
        try:
            locks = LogDirLocks.acquire(self.config.log_dirs)
        except (LogDirInUse, OSError) as e:
            for _, sock in sockets:
                sock.close()
            for extra in (http_socket, registry_socket, rest_socket):
                if extra is not None:
                    extra.close()
            if isinstance(e, LogDirInUse):
                raise StartupError(str(e)) from e
            raise StartupError(f"log dir {e.filename}: {(e.strerror or str(e)).lower()}") from e
        broker: Broker | None = None
        try:
            broker = self.broker = Broker(self.config)
            async with trio.open_nursery() as background:
                if http_socket is not None:
                    # Up first, so /healthz answers and /readyz says why not while the broker loads.
                    endpoints = http_endpoint.BrokerEndpoints(broker, self.connection_counts, lambda: self.listening,
                                                              http_address[0])
                    await background.start(http_endpoint.serve_endpoints, http_socket, endpoints)
                await background.start(broker.run)
                listening = start_listening(sockets)
                if registry_socket is not None:
                    # A Kafka client of this broker: it starts once the broker takes connections.
                    from pykafkad.schema_registry.registry_access import RegistryAccess
                    # With an authorizer, the registry asks for the broker's SASL users and its ACLs.
                    access = RegistryAccess(broker) if broker.authorizer is not None else None
                    background.start_soon(registry_server.serve_in_broker, registry_socket, self.config,
                                          broker.schema_source(), access)
                    registry_socket = None
                if rest_socket is not None:
                    # Imported only when asked for, as the registry is.
                    from pykafkad.rest_proxy import server as rest_server
                    from pykafkad.schema_registry.registry_access import RegistryAccess
                    # With an authorizer, callers log in with the broker's SASL users (as the registry's do).
                    rest_access = RegistryAccess(broker) if broker.authorizer is not None else None
                    background.start_soon(rest_server.serve_in_broker, rest_socket, self.config, rest_access)
                    rest_socket = None
                await self._serve(broker, listening, started, task_status)
                background.cancel_scope.cancel()
        finally:
            for _, sock in sockets:
                sock.close()
            for extra in (registry_socket, rest_socket):
                if extra is not None:
                    extra.close()
            if broker is not None:
                log.info("flushing and closing logs")
                broker.close()
            locks.release()
            log.info("pykafkad stopped")

    async def _serve(self, broker: Broker, listeners: list[tuple[Listener, trio.SocketListener]], started: float,
                     task_status: trio.TaskStatus[Server]) -> None:
        self.bound = [tuple(lst.socket.getsockname()[:2]) for _, lst in listeners]  # type: ignore[misc]
        for spec, _ in listeners:
            metrics.start_listener_series(spec.name)
        self.listening = True
        log.info(
            "pykafkad started in %.2fs: node %d, cluster %s, listening on %s, data in %s, metadata in %s",
            time.monotonic() - started, self.config.node_id, broker.metadata.cluster_id,
            ", ".join(f"{h}:{p}" for h, p in self.bound),
            ", ".join(str(d) for d in self.config.log_dirs), broker.store.description,
        )
        async with trio.open_nursery() as connections:
            self.drain_scope = connections.cancel_scope
            with self.accept_scope:
                async with trio.open_nursery() as acceptors:
                    for spec, lst in listeners:
                        acceptors.start_soon(self._accept_loop, spec, lst, broker, connections)
                    acceptors.start_soon(self._expire_idle_connections)
                    task_status.started(self)
            # Accepting has stopped: close idle connections, give busy ones time to finish
            # (or until another signal).
            broker.begin_shutdown()
            for conn in list(self.connections):
                conn.stop_waiting()
            connections.cancel_scope.deadline = trio.current_time() + SHUTDOWN_GRACE_S

    async def _expire_idle_connections(self) -> None:
        """Close the plain connections idle for connections.max.idle.ms, as Kafka's Selector expires
        idle channels: a sweep every tenth of that (at most a second apart), so a connection goes
        at most that much later than its limit."""
        max_idle_ms = self.config["connections.max.idle.ms"]
        if max_idle_ms < 0:
            return
        tick = min(1.0, max(0.01, max_idle_ms / 10_000))
        while True:
            await trio.sleep(tick)
            now = trio.current_time()
            for conn in self.connections:
                conn.expire_if_idle(now)

    async def _on_signals(self, signals: AsyncIterator[int]) -> None:
        """The first signal stops the broker: at once while it starts, after a controlled shutdown
        (the hand-over of its leaderships) once it serves.  The next one cuts the hand-over, then
        the drain of busy connections, short."""
        async for signum in signals:
            name = signal.Signals(signum).name
            if not self.listening or self.broker is None:
                log.info("received %s while starting: stopping", name)
                self.start_scope.cancel()
                return
            log.info("received %s, shutting down", name)
            with trio.CancelScope() as handover:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._cancel_on_signal, signals, handover)
                    await self.broker.controlled_shutdown()
                    nursery.cancel_scope.cancel()
            self.accept_scope.cancel()
            break
        if self.drain_scope is not None:
            await self._cancel_on_signal(signals, self.drain_scope)

    @staticmethod
    async def _cancel_on_signal(signals: AsyncIterator[int], scope: trio.CancelScope) -> None:
        async for signum in signals:
            log.info("received %s again: stopping now", signal.Signals(signum).name)
            scope.cancel()
            return

    def stop(self) -> None:
        """Begin the same shutdown a signal would (for embedding and tests)."""
        self.accept_scope.cancel()


def run_server(config: BrokerConfig) -> None:
    trio.run(Server(config).run)
