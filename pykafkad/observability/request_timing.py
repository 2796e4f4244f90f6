"""Where a request's time goes, split as Kafka's RequestMetrics splits it: queue (from its last byte
to its handler), local (the handler's own work), remote (waiting for others: an acks=all produce
for its followers, a fetch's long poll) and send (writing the response).

The connection starts a ``RequestTiming`` for each request; the layers that wait on others mark
their waits with ``waiting_remotely()``, which finds the request through a context variable (each
connection is one Trio task, whose children inherit it), so no layer needs to know the network.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from pykafkad.observability import kafka_metrics as m
from wire.error_codes import ErrorCode


@dataclass
class RequestTiming:
    api: str
    received: float
    started: float = 0.0
    handled: float = 0.0
    remote: float = 0.0

    def observe(self, send_started: float, sent: float) -> None:
        """Record the request's times (seconds in, Kafka's milliseconds out)."""
        handler = max(0.0, self.handled - self.started)
        remote = min(self.remote, handler)
        m.TOTAL_TIME.labels(self.api).observe((sent - self.received) * 1000)
        m.QUEUE_TIME.labels(self.api).observe(max(0.0, self.started - self.received) * 1000)
        m.LOCAL_TIME.labels(self.api).observe((handler - remote) * 1000)
        m.REMOTE_TIME.labels(self.api).observe(remote * 1000)
        m.SEND_TIME.labels(self.api).observe(max(0.0, sent - send_started) * 1000)


_current: ContextVar[RequestTiming | None] = ContextVar("request_timing", default=None)


def begin(timing: RequestTiming) -> None:
    """Make ``timing`` the calling task's request (its handler and the tasks it starts)."""
    timing.started = time.perf_counter()
    _current.set(timing)


@contextmanager
def waiting_remotely() -> Iterator[None]:
    """Count the time inside as the current request's remote time (if there is one)."""
    timing = _current.get()
    began = time.perf_counter()
    try:
        yield
    finally:
        if timing is not None:
            timing.remote += time.perf_counter() - began


@contextmanager
def off_loop(call: str) -> Iterator[None]:
    """Count the time inside as Rust work in a worker thread (``pykafkad_rust_off_loop_seconds``)."""
    began = time.perf_counter()
    try:
        yield
    finally:
        m.OFF_LOOP_SECONDS.labels(call).inc(time.perf_counter() - began)


def count_errors(api: str, response: object) -> None:
    """Count every non-zero ``error_code`` in an answer (for APIs whose handlers do not count their own)."""
    stack = [response]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            code = item.get("error_code")
            if isinstance(code, int) and code != 0:
                m.ERRORS.labels(api, _error_name(code)).inc()
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def count_partition_error(api: str, topic: str, code: int, failed: m.Counter) -> None:
    """One partition answered with ``code``: Kafka's ErrorsPerSec and the topic's failed requests."""
    m.ERRORS.labels(api, _error_name(code)).inc()
    failed.labels(topic).inc()
