"""The REST proxy's metrics (in the broker's /metrics, and the proxy's own): requests by endpoint
and status with their latency, consumer instances alive, and records through HTTP."""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("pykafkad_rest_requests", "REST proxy requests answered", ["method", "endpoint", "status"])
LATENCY = Histogram("pykafkad_rest_request_seconds", "REST proxy request latency", ["method", "endpoint"])
CONSUMER_INSTANCES = Gauge("pykafkad_rest_consumer_instances", "v2 consumer instances alive on this proxy")
RECORDS_PRODUCED = Counter("pykafkad_rest_records_produced", "Records produced through the REST proxy", ["topic"])
RECORDS_CONSUMED = Counter("pykafkad_rest_records_consumed", "Records read through the REST proxy", ["topic"])


class RequestMetrics:
    """ASGI middleware: each request counted and timed under its route's path template."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            endpoint = getattr(route, "path", None) or "unmatched"
            REQUESTS.labels(scope["method"], endpoint, str(status[0])).inc()
            LATENCY.labels(scope["method"], endpoint).observe(time.perf_counter() - started)
