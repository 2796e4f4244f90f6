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
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

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
        total, queue, local, remote_time, send = _histograms(self.api)
        total.observe((sent - self.received) * 1000)
        queue.observe(max(0.0, self.started - self.received) * 1000)
        local.observe((handler - remote) * 1000)
        remote_time.observe(remote * 1000)
        send.observe(max(0.0, sent - send_started) * 1000)


# Each API's five histograms, looked up once (``labels()`` takes a lock and hashes every time).
_HISTOGRAMS: dict[str, tuple[Any, Any, Any, Any, Any]] = {}


def _histograms(api: str) -> tuple[Any, Any, Any, Any, Any]:
    found = _HISTOGRAMS.get(api)
    if found is None:
        found = _HISTOGRAMS[api] = tuple(h.labels(api) for h in (m.TOTAL_TIME, m.QUEUE_TIME, m.LOCAL_TIME,
                                                                   m.REMOTE_TIME, m.SEND_TIME))
    return found


_current: ContextVar[RequestTiming | None] = ContextVar("request_timing", default=None)


def begin(timing: RequestTiming) -> None:
    """Make ``timing`` the calling task's request (its handler and the tasks it starts)."""
    timing.started = time.perf_counter()
    _current.set(timing)


class _RemoteWait:
    """Adds the time between entry and exit to a request's remote time."""

    __slots__ = ("timing", "began")

    def __init__(self, timing: RequestTiming) -> None:
        self.timing = timing

    def __enter__(self) -> None:
        self.began = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.timing.remote += time.perf_counter() - self.began


_UNTIMED = nullcontext()


def waiting_remotely() -> AbstractContextManager[None]:
    """Count the time inside as the current request's remote time (if there is one).  Without
    request metrics (no ``metrics.listener``) it costs a context variable's lookup: it is on every
    acks=all produce and long-poll fetch."""
    timing = _current.get()
    return _UNTIMED if timing is None else _RemoteWait(timing)


@contextmanager
def off_loop(call: str) -> Iterator[None]:
    """Count the time inside as Rust work in a worker thread (``pykafkad_rust_off_loop_seconds``)."""
    began = time.perf_counter()
    try:
        yield
    finally:
        m.OFF_LOOP_SECONDS.labels(call).inc(time.perf_counter() - began)


def count_errors(api: str, response: object) -> None:
    """Count every non-zero ``error_code`` in an answer (for APIs whose handlers do not count their own).
    Metadata's are counted per topic only: walking every partition of a large cluster's answer would
    cost more than the answer itself."""
    if api == "Metadata" and isinstance(response, dict):
        for topic in response.get("topics") or []:
            if topic["error_code"]:
                m.ERRORS.labels(api, _error_name(topic["error_code"])).inc()
        return
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
    m.for_topic(failed, topic).inc()
