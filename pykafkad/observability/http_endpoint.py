"""The broker's HTTP listener (``metrics.listener``): ``/metrics`` for Prometheus, ``/healthz`` (the
process answers) and ``/readyz`` (loaded, registered, listening, and leading every partition the
cluster says it leads) for Kubernetes probes, and the JSON admin API under ``/api/``
(``admin_api.py``).  An ASGI app served by hypercorn on the broker's own Trio loop, in the same
process."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from pykafkad.client_telemetry import TelemetryCollector
from pykafkad.observability import admin_api, console
from pykafkad.observability import kafka_metrics as m
from pykafkad.observability.broker_state import BrokerStateCollector
from pykafkad.observability.history import History
from pykafkad.observability.record_browser import Searches

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], Awaitable[None]]
LOOP_LAG_INTERVAL_S = 0.5


def loopback_host(scope: dict[str, Any]) -> bool:
    """Whether the request names a loopback host (its Host header)."""
    host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), "")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return name in ("127.0.0.1", "localhost", "[::1]")


def bind(address: tuple[str, int]) -> socket.socket:
    """The listening socket, bound at start so a taken port stops the start with a clear message."""
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class BrokerEndpoints:
    """The ASGI app: what each path answers."""

    def __init__(self, broker: Broker, connections: Callable[[], dict[str, int]], ready: Callable[[], bool],
                 bound_host: str = "0.0.0.0") -> None:
        self.broker = broker
        self.ready = ready
        self.console_enabled = bool(broker.config["metrics.console.enable"])
        # Bound to loopback, only loopback names may be asked for (a page of another site cannot
        # reach the console by pointing its own name at 127.0.0.1: DNS rebinding).
        self.loopback_only = bound_host in ("127.0.0.1", "::1", "localhost")
        self.state = BrokerStateCollector(broker, connections)
        self.telemetry = TelemetryCollector(broker.client_telemetry)
        self._render_limiter = trio.CapacityLimiter(1)  # scrapes queue rather than each take a thread
        self.history = History(broker)
        self.searches = Searches(broker)

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                       send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path = scope["path"]
        query = scope.get("query_string", b"").decode("utf-8", "replace")
        if self.loopback_only and not loopback_host(scope):
            await _answer(send, 403, b"this listener answers only to 127.0.0.1, localhost or [::1]\n", "text/plain")
            return
        if path in ("/metrics", "/healthz", "/readyz"):
            await self._probe(send, path)
        elif not self.console_enabled:
            await _answer(send, 404, b"not found: /metrics, /healthz and /readyz are served here; the console and "
                          b"/api/ need metrics.console.enable=true\n", "text/plain")
        elif path.startswith("/api/search/"):
            tail = path.removeprefix("/api/search/")
            found_search = self.searches.searches.get(int(tail)) if tail.isascii() and tail.isdigit() else None
            if found_search is None:
                await _answer(send, 404, b'{"error": "no such search"}', "application/json")
            else:
                await _answer(send, 200, json.dumps(found_search.progress()).encode(), "application/json")
        elif path.startswith("/api/"):
            try:
                found = await admin_api.answer(self.broker, path, query)
            except admin_api.NotFound as e:
                await _answer(send, 404, json.dumps({"error": str(e)}).encode(), "application/json")
                return
            await _answer(send, 200, json.dumps(found).encode(), "application/json")
        else:
            await self._console(send, path, query)

    async def _probe(self, send: Send, path: str) -> None:
        if path == "/metrics":
            await self.state.refresh()
            self.telemetry.refresh()
            # Rendering is pure Python over locked counters and the snapshot: in a thread it shares
            # the GIL with the loop in 5 ms slices instead of stopping it for the whole scrape
            # (8-40 ms; see "What metrics.listener costs" in benchmarks/RESULTS.md).
            body = await trio.to_thread.run_sync(generate_latest, REGISTRY, limiter=self._render_limiter)
            await _answer(send, 200, body, CONTENT_TYPE_LATEST)
        elif path == "/healthz":
            await _answer(send, 200, b"ok\n", "text/plain")
        elif path == "/readyz":
            problems = self.readiness_problems()
            body = json.dumps({"ready": not problems, "problems": problems}).encode()
            await _answer(send, 503 if problems else 200, body, "application/json")

    async def _console(self, send: Send, path: str, query: str) -> None:
        parts = [p for p in path.split("/") if p]  # the ASGI path is already percent-decoded
        try:
            match parts:
                case []:
                    page = console.brokers_page(self.broker)
                case ["topics"]:
                    page = console.topics_page(self.broker, self.history)
                case ["topics", name]:
                    page = await console.topic_page(self.broker, self.history, name)
                case ["groups"]:
                    page = await console.groups_page(self.broker)
                case ["groups", group_id]:
                    page = await console.group_page(self.broker, self.history, group_id)
                case ["browse"]:
                    page = await console.browse_page(self.broker, query)
                case ["search"]:
                    page = console.search_page(self.broker, query, self.searches)
                case _:
                    raise admin_api.NotFound(f"no page {path}: try / (the console), /metrics, /healthz, /readyz "
                                             "or /api/cluster")
        except admin_api.NotFound as e:
            await _answer(send, 404, console.not_found_page(str(e)), "text/html; charset=utf-8")
            return
        await _answer(send, 200, page, "text/html; charset=utf-8")

    def readiness_problems(self) -> list[str]:
        broker = self.broker
        node = broker.config.node_id
        problems = []
        if not self.ready():
            problems.append("not yet listening for clients")
        if node not in broker.metadata.brokers:
            problems.append(f"broker {node} is not registered in the cluster")
        for log_dir, reason in broker.logs.dir_failures.failed().items():
            problems.append(f"log dir {log_dir} is {reason}")
        for topic in broker.metadata.topics.values():
            for p in topic.partitions:
                if p.leader == node:
                    replica = broker.replicas.get(topic.name, p.index)
                    if replica is None or not replica.is_leader:
                        problems.append(f"{topic.name}-{p.index}: led here but not served yet")
                        if len(problems) > 10:
                            return problems
        return problems


async def _answer(send: Send, status: int, body: bytes, content_type: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def serve_endpoints(sock: socket.socket, endpoints: BrokerEndpoints,
                          task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve ``endpoints`` on the bound ``sock`` until cancelled, with the loop-lag sampler beside."""
    config = HypercornConfig()
    config.bind = [f"fd://{sock.detach()}"]
    config.accesslog = None
    config.errorlog = log
    config.graceful_timeout = 1.0
    REGISTRY.register(endpoints.state)
    REGISTRY.register(endpoints.telemetry)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_sample_loop_lag)
            nursery.start_soon(endpoints.history.run)
            await nursery.start(endpoints.searches.run)
            await nursery.start(serve, endpoints, config)
            task_status.started()
    finally:
        REGISTRY.unregister(endpoints.state)
        REGISTRY.unregister(endpoints.telemetry)


async def _sample_loop_lag() -> None:
    """How late a sleep wakes up is how long other work held the loop (``pykafkad_event_loop_lag_seconds``)."""
    while True:
        due = time.perf_counter() + LOOP_LAG_INTERVAL_S
        await trio.sleep(LOOP_LAG_INTERVAL_S)
        m.EVENT_LOOP_LAG.observe(max(0.0, time.perf_counter() - due))
