"""The REST proxy as a running service: its Kafka clients made, its routes (v2, v3) served by
hypercorn on the caller's Trio loop, its consumer instances expired.  The broker starts it for
``rest.listener``; ``pykafkad rest`` starts it on its own against any Kafka cluster."""

from __future__ import annotations

import logging
import socket
import ssl
from dataclasses import dataclass
from typing import Any

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.schemas import SchemaGenerator

from pykafkad.config import BrokerConfig, ConfigError, parse_http_listener
from pykafkad.http_route_metrics import RouteMetrics
from pykafkad.network.tls import server_context
from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.api_v2 import V2Api
from pykafkad.rest_proxy.api_v3 import V3Api
from pykafkad.rest_proxy.api_v3_records import V3Records
from pykafkad.rest_proxy.consumer_instances import ConsumerInstances
from pykafkad.rest_proxy.kafka_clients import BasicAuthentication, ClientsOfCaller, SaslSettings
from pykafkad.rest_proxy.rest_metrics import LATENCY, REQUESTS
from pykafkad.rest_proxy.schema_formats import SchemaFormats
from pykafkad.schema_registry.registry_access import RegistryAccess
from pykafkad.schema_registry.server import LoopbackOnly, bind

__all__ = ["RestSettings", "bind", "serve_rest", "serve_in_broker"]

log = logging.getLogger(__name__)

OPENAPI = SchemaGenerator({"openapi": "3.0.0", "info": {"title": "pykafkad REST proxy (Confluent REST Proxy API)",
                                                         "version": "v3"}})


@dataclass
class RestSettings:
    """The proxy's limits and links, with their config keys' defaults."""
    max_request_bytes: int = 67_108_864
    max_records: int = 10_000
    instance_timeout_ms: int = 300_000
    max_instances: int = 100
    registry_url: str | None = None

    @classmethod
    def of(cls, config: BrokerConfig) -> RestSettings:
        registry = config["rest.schema.registry.url"] or None
        return cls(config["rest.max.request.bytes"], config["rest.producer.records.max"],
                   config["rest.consumer.instance.timeout.ms"], config["rest.consumer.instances.max"], registry)


def _error_response(request: Request, error: rest_errors.RestError) -> Response:
    # v3 answers application/json throughout, errors included; v2 its own type.
    media = "application/json" if request.url.path.startswith("/v3") else "application/vnd.kafka.v2+json"
    return JSONResponse(error.body(), status_code=error.status, media_type=media)


async def _rest_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, rest_errors.RestError)
    return _error_response(request, exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error_response(request, rest_errors.RestError(exc.status_code, exc.status_code,
                                                          f"HTTP {exc.status_code} {exc.detail}"))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.error("rest proxy: %s %s failed", request.method, request.url.path, exc_info=exc)
    return _error_response(request, rest_errors.RestError(500, 500, f"Internal server error: {exc}"))


def make_app(v2: V2Api, v3: V3Api, records: V3Records) -> Any:
    consumer = "/consumers/{group}/instances/{instance}"
    cluster = "/v3/clusters/{cluster_id}"
    topic = cluster + "/topics/{topic}"
    group = cluster + "/consumer-groups/{group}"

    async def root(request: Request) -> Response:
        return JSONResponse({})

    async def openapi(request: Request) -> Response:
        return JSONResponse(OPENAPI.get_schema(request.app.routes))

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    routes = [
        Route("/", root, include_in_schema=False),
        Route("/topics", v2.topics),
        Route("/topics/{topic}", v2.topic, methods=["GET"]),
        Route("/topics/{topic}", v2.produce, methods=["POST"]),
        Route("/topics/{topic}/partitions", v2.partitions),
        Route("/topics/{topic}/partitions/{partition}", v2.partition, methods=["GET"]),
        Route("/topics/{topic}/partitions/{partition}", v2.produce, methods=["POST"]),
        Route("/topics/{topic}/partitions/{partition}/offsets", v2.partition_offsets),
        Route("/brokers", v2.brokers),
        Route("/consumers/{group}", v2.create_consumer, methods=["POST"]),
        Route(consumer, v2.delete_consumer, methods=["DELETE"]),
        Route(consumer + "/subscription", v2.subscription, methods=["GET", "POST", "DELETE"]),
        Route(consumer + "/assignments", v2.assignments, methods=["GET", "POST"]),
        Route(consumer + "/positions", v2.positions, methods=["POST"]),
        Route(consumer + "/positions/beginning", v2.positions_edge, methods=["POST"]),
        Route(consumer + "/positions/end", v2.positions_edge, methods=["POST"]),
        Route(consumer + "/records", v2.records, methods=["GET"]),
        Route(consumer + "/offsets", v2.offsets, methods=["GET", "POST"]),
        Route("/v3/clusters", v3.clusters),
        Route(cluster, v3.cluster),
        Route(cluster + "/brokers", v3.brokers),
        Route(cluster + "/brokers/{broker_id}", v3.broker),
        Route(cluster + "/brokers/{broker_id}/configs", v3.broker_configs),
        Route(cluster + "/brokers/{broker_id}/configs/{name}", v3.broker_configs),
        Route(cluster + "/topics", v3.topics, methods=["GET", "POST"]),
        Route(topic, v3.topic, methods=["GET", "PATCH", "DELETE"]),
        Route(topic + "/configs", v3.topic_configs),
        Route(topic + "/configs:alter", v3.alter_topic_configs, methods=["POST"]),
        Route(topic + "/configs/{name}", v3.topic_configs, methods=["GET", "PUT", "DELETE"]),
        Route(topic + "/partitions", v3.partitions),
        Route(topic + "/partitions/{partition_id}", v3.partitions),
        Route(topic + "/records", records.produce, methods=["POST"]),
        Route(cluster + "/consumer-groups", v3.groups),
        Route(group, v3.groups),
        Route(group + "/consumers", v3.consumers),
        Route(group + "/consumers/{consumer}", v3.consumers),
        Route(group + "/consumers/{consumer}/assignments", v3.consumers),
        Route(group + "/lags", v3.lags),
        Route(group + "/lag-summary", v3.lag_summary),
        Route(cluster + "/acls", v3.acls, methods=["GET", "POST", "DELETE"]),
        Route("/openapi.json", openapi, include_in_schema=False),
        Route("/metrics", metrics, include_in_schema=False),
    ]
    return Starlette(routes=routes, exception_handlers={rest_errors.RestError: _rest_error,
                                                       HTTPException: _http_error, Exception: _unexpected})


class _TlsConfig(HypercornConfig):
    """Hypercorn's config with a TLS context made elsewhere (from the broker's PEM settings)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__()
        self._context = context

    @property
    def ssl_enabled(self) -> bool:
        return True

    def create_ssl_context(self) -> ssl.SSLContext | None:
        return self._context


async def serve_rest(sock: socket.socket, client: dict[str, Any], settings: RestSettings,
                     sasl: SaslSettings | None = None, tls: ssl.SSLContext | None = None,
                     task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Answer on ``sock`` until cancelled (``sock`` is closed either way), as a Kafka client
    configured by ``client``; with ``sasl``, each caller as the user its Basic credentials name;
    with ``tls``, over HTTPS."""
    address = sock.getsockname()
    clients = ClientsOfCaller(client, sasl)
    try:
        await clients.start()
    except BaseException:
        sock.close()
        raise
    instances = ConsumerInstances(clients, settings.instance_timeout_ms, settings.max_instances)
    schemas = SchemaFormats(settings.registry_url)
    v2 = V2Api(clients, instances, schemas, settings.max_request_bytes, settings.max_records)
    v3 = V3Api(clients, settings.max_request_bytes)
    records = V3Records(v3, schemas.link, settings.max_request_bytes)
    app: Any = RouteMetrics(BasicAuthentication(make_app(v2, v3, records), clients), REQUESTS, LATENCY)
    if sasl is None and address[0] in ("127.0.0.1", "::1"):
        app = LoopbackOnly(app, "proxy", "application/vnd.kafka.v2+json")
    async with trio.open_nursery() as nursery:
        await nursery.start(clients.run)
        nursery.start_soon(instances.expire)
        config = HypercornConfig() if tls is None else _TlsConfig(tls)
        config.bind = [f"fd://{sock.detach()}"]
        config.accesslog = None
        config.errorlog = log
        config.graceful_timeout = 1.0
        await nursery.start(serve, app, config)
        log.info("rest proxy: serving on %s://%s:%d%s", "https" if tls else "http", address[0], address[1],
                 " (HTTP Basic credentials passed on to the cluster)" if sasl is not None else "")
        task_status.started()


def broker_sasl(config: BrokerConfig, access: RegistryAccess) -> SaslSettings | None:
    """How a caller of the broker's proxy logs in to the broker: its Basic credentials, checked
    against the broker's SASL users, on the broker's SASL_PLAINTEXT listener; None if there is none."""
    for listener in config.listeners:
        if listener.security_protocol == "SASL_PLAINTEXT":
            host = "127.0.0.1" if listener.host in ("", "0.0.0.0") else listener.host
            host = "[::1]" if host == "::" else (f"[{host}]" if ":" in host else host)
            bootstrap = f"{host}:{listener.port}"
            break
    else:
        return None

    def settings(user: str, password: str) -> dict[str, Any] | None:
        mechanism = access.login_mechanism(user, password)
        if mechanism is None:
            return None
        return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                "sasl.username": user, "sasl.password": password}

    return settings


async def serve_in_broker(sock: socket.socket, config: BrokerConfig, access: RegistryAccess | None = None) -> None:
    """The proxy of ``rest.listener``, a client of this broker on its PLAINTEXT listener; its
    schema formats use ``rest.schema.registry.url`` or this broker's own registry.  With an
    authorizer (``access``), each caller logs in with Basic credentials and acts as that user on the
    broker's SASL_PLAINTEXT listener."""
    from pykafkad.schema_registry.server import broker_client
    client = broker_client(config)
    sasl = broker_sasl(config, access) if access is not None else None
    problem = None
    tls = None
    listener = parse_http_listener(config["rest.listener"])
    if listener is not None and listener[0]:
        try:
            tls = server_context(config)
        except ConfigError as e:
            problem = f"rest.listener is https, but the broker's TLS settings do not make a server context: {e}"
    if client is None:
        problem = "rest.listener needs a PLAINTEXT listener in listeners to reach the broker"
    elif access is not None and sasl is None:
        problem = "with an authorizer, rest.listener needs a SASL_PLAINTEXT listener for its callers to log in on"
    if problem is not None:
        sock.close()
        log.error("rest proxy: not started: %s (or run `pykafkad rest` with --command-config)", problem)
        return
    assert client is not None
    settings = RestSettings.of(config)
    if settings.registry_url is None and config["schema.registry.listener"]:
        host, port = config["schema.registry.listener"].removeprefix("http://").rsplit(":", 1)
        host = "127.0.0.1" if host in ("", "0.0.0.0") else ("[::1]" if host in ("::", "[::]") else host)
        settings.registry_url = f"http://{host}:{port}"
    await serve_rest(sock, client, settings, sasl, tls)
