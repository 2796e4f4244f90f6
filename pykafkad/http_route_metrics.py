"""Per-route request metrics for the HTTP APIs on Starlette (the schema registry, the REST proxy):
an ASGI wrapper that counts each request once under its route's path template, method and status,
and, when given a histogram, times it."""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import Counter, Histogram


class RouteMetrics:
    """ASGI middleware: each request counted (and timed) under its route's path template."""

    def __init__(self, app: Any, requests: Counter, latency: Histogram | None = None) -> None:
        self.app = app
        self.requests = requests
        self.latency = latency

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
            endpoint = getattr(scope.get("route"), "path", None) or "unmatched"
            self.requests.labels(scope["method"], endpoint, str(status[0])).inc()
            if self.latency is not None:
                self.latency.labels(scope["method"], endpoint).observe(time.perf_counter() - started)
