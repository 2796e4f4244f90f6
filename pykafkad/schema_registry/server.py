"""The registry as a running service: its topic followed, its API served by hypercorn on the
caller's Trio loop.  The broker starts it for ``schema.registry.listener``; ``pykafkad registry``
starts it on its own against any Kafka cluster."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve

from pykafkad.config import BrokerConfig
from pykafkad.http_route_metrics import RouteMetrics
from pykafkad.observability.http_endpoint import loopback_host
from pykafkad.schema_registry.api import make_app
from pykafkad.schema_registry.primary_election import PrimaryElection
from pykafkad.schema_registry.registry import Registry
from pykafkad.schema_registry.registry_access import RegistryAccess
from pykafkad.schema_registry.registry_metrics import (
    REQUESTS,
    StateCollector,
    register_collector,
    unregister_collector,
)
from pykafkad.schema_registry.registry_state import RegistryState
from pykafkad.schema_registry.schema_source import SchemaSource
from pykafkad.schema_registry.schemas_topic import SchemasTopic, StoreStartError

log = logging.getLogger(__name__)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything starts so a taken port stops the start."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class LoopbackOnly:
    """ASGI middleware, as the console has: an HTTP API bound to loopback without credentials
    (the registry's, the REST proxy's) answers only requests that name a loopback host, so a web
    page of another site cannot reach it by pointing its own name at 127.0.0.1 (DNS rebinding)."""

    def __init__(self, app: Any, service: str = "registry",
                 content_type: str = "application/vnd.schemaregistry.v1+json") -> None:
        self.app = app
        self.service = service
        self.content_type = content_type.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not loopback_host(scope):
            body = json.dumps({"error_code": 40301, "message": f"this {self.service} answers only to 127.0.0.1, "
                                                               "localhost or [::1]"}).encode()
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", self.content_type),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def advertised_url(sock: socket.socket, host: str | None = None) -> str:
    """The URL other instances reach this one at: the listener's, with a wildcard address replaced
    by ``host`` (the broker's advertised host) or this machine's name."""
    bound_host, port = sock.getsockname()[:2]
    if bound_host in ("0.0.0.0", "::", ""):
        bound_host = host or socket.gethostname()
    return f"http://[{bound_host}]:{port}" if ":" in bound_host else f"http://{bound_host}:{port}"


async def serve_registry(sock: socket.socket, client: dict[str, Any], topic: str, max_request_bytes: int,
                         replication_factor: int | None = None, source: SchemaSource | None = None,
                         url: str | None = None, access: RegistryAccess | None = None,
                         task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Read ``topic`` to its end, then answer on ``sock`` until cancelled (``sock`` is closed either
    way), taking part in the election of the primary as ``url``.  ``source``, the broker's schema
    validation, then reads the same state."""
    state = RegistryState()
    schemas = SchemasTopic(client, topic, state, replication_factor)
    election = PrimaryElection(client, topic, url or advertised_url(sock))
    app = RouteMetrics(make_app(Registry(state, schemas), max_request_bytes, election, access), REQUESTS)
    if access is None and sock.getsockname()[0] in ("127.0.0.1", "::1"):
        app = LoopbackOnly(app)
    address = sock.getsockname()
    collector = StateCollector(state, schemas.lag, lambda: election.is_primary)
    registered = register_collector(collector)
    try:
        await _serve(sock, schemas, election, app, address, topic, source, task_status)
    finally:
        if registered:
            unregister_collector(collector)


async def _serve(sock: socket.socket, schemas: SchemasTopic, election: PrimaryElection, app: Any, address: Any,
                 topic: str, source: SchemaSource | None, task_status: trio.TaskStatus[None]) -> None:
    async with trio.open_nursery() as nursery:
        try:
            await nursery.start(schemas.run)
        except BaseException:
            sock.close()
            raise
        if source is not None:
            source.attach(schemas)
        await nursery.start(election.run)
        config = HypercornConfig()
        config.bind = [f"fd://{sock.detach()}"]
        config.accesslog = None
        config.errorlog = log
        config.graceful_timeout = 1.0
        await nursery.start(serve, app, config)
        log.info("schema registry: serving on http://%s:%d (topic %s)", address[0], address[1], topic)
        task_status.started()


def broker_client(config: BrokerConfig) -> dict[str, Any] | None:
    """How the registry inside a broker reaches it: a PLAINTEXT listener of its own, or None."""
    for listener in config.listeners:
        if listener.security_protocol == "PLAINTEXT":
            host = "127.0.0.1" if listener.host in ("", "0.0.0.0") else listener.host
            host = "[::1]" if host == "::" else (f"[{host}]" if ":" in host else host)
            return {"bootstrap.servers": f"{host}:{listener.port}"}
    return None


async def serve_in_broker(sock: socket.socket, config: BrokerConfig, source: SchemaSource | None = None,
                          access: RegistryAccess | None = None) -> None:
    """The registry of ``schema.registry.listener``: a failure to start is one ERROR line (and the
    reason ``source`` gives produces to validated topics), and the broker goes on serving Kafka."""
    client = broker_client(config)
    if client is None:
        sock.close()
        problem = ("schema.registry.listener needs a PLAINTEXT listener in listeners to reach the broker (run "
                   "`pykafkad registry` with --command-config instead)")
        log.error("schema registry: not started: %s", problem)
        if source is not None:
            source.registry_failed(problem)
        return
    try:
        # The topic is replicated as the broker's own internal topics are.
        await serve_registry(sock, client, config["schema.registry.topic"], config["schema.registry.max.request.bytes"],
                             config["offsets.topic.replication.factor"], source,
                             advertised_url(sock, config.advertised_endpoint[0]), access)
    except* StoreStartError as group:
        log.error("schema registry: not started: %s", group.exceptions[0])
        if source is not None:
            source.registry_failed(str(group.exceptions[0]))
