"""The Trio server: listeners, one task per connection, and graceful shutdown on SIGTERM/SIGINT.

Shutdown stops accepting, lets in-flight requests finish (long-polls answer early),
closes idle connections, then flushes and closes every log and leaves the clean-shutdown
marker so the next start skips recovery.
"""

from __future__ import annotations

import logging
import signal
import time

import trio

from pykafkad.broker import Broker
from pykafkad.config import BrokerConfig
from pykafkad.connection import Connection

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 30.0


class Server:
    """Listeners and connections of one broker process."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.connections: set[Connection] = set()
        self.accept_scope = trio.CancelScope()
        self.bound: list[tuple[str, int]] = []

    async def _serve_connection(self, stream: trio.SocketStream, broker: Broker) -> None:
        try:
            host, port = stream.socket.getpeername()[:2]
            peer = f"{host}:{port}"
        except OSError:
            peer = "unknown peer"
        conn = Connection(stream, broker, peer)
        self.connections.add(conn)
        try:
            await conn.serve()
        finally:
            self.connections.discard(conn)

    async def _accept_loop(self, listener: trio.SocketListener, broker: Broker,
                           nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as e:
                    # Out of file descriptors and the like: wait and keep serving existing clients.
                    log.error("accept failed: %s", e)
                    await trio.sleep(0.1)
                    continue
                nursery.start_soon(self._serve_connection, stream, broker)

    async def run(self, task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED) -> None:
        started = time.monotonic()
        broker = Broker(self.config)
        try:
            async with trio.open_nursery() as background:
                await background.start(broker.run_background)
                await self._serve(broker, started, task_status)
                background.cancel_scope.cancel()
        finally:
            log.info("flushing and closing logs")
            broker.close()
            log.info("pykafkad stopped")

    async def _serve(self, broker: Broker, started: float, task_status: trio.TaskStatus[Server]) -> None:
        listeners: list[trio.SocketListener] = []
        for spec in self.config.listeners:
            listeners.extend(await trio.open_tcp_listeners(spec.port, host=spec.host or None))
        self.bound = [tuple(lst.socket.getsockname()[:2]) for lst in listeners]  # type: ignore[misc]
        log.info(
            "pykafkad started in %.2fs: node %d, cluster %s, listening on %s, data in %s",
            time.monotonic() - started, self.config.node_id, broker.metadata.cluster_id,
            ", ".join(f"{h}:{p}" for h, p in self.bound),
            ", ".join(str(d) for d in self.config.log_dirs),
        )
        async with trio.open_nursery() as connections:
            with self.accept_scope:
                async with trio.open_nursery() as acceptors:
                    acceptors.start_soon(self._wait_for_signal, broker)
                    for lst in listeners:
                        acceptors.start_soon(self._accept_loop, lst, broker, connections)
                    task_status.started(self)
            # Accepting has stopped: close idle connections, give busy ones time to finish.
            broker.begin_shutdown()
            for conn in list(self.connections):
                conn.idle_scope.cancel()
            connections.cancel_scope.deadline = trio.current_time() + SHUTDOWN_GRACE_S

    async def _wait_for_signal(self, broker: Broker) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.info("received %s, shutting down", signal.Signals(signum).name)
                self.accept_scope.cancel()
                return

    def stop(self) -> None:
        """Begin the same shutdown a signal would (for embedding and tests)."""
        self.accept_scope.cancel()


def run_server(config: BrokerConfig) -> None:
    trio.run(Server(config).run)
