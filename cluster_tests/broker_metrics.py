"""Three brokers each with a metrics listener, and reading their /metrics until a gauge says what a
test waits for (the broker's state has caught up with the event)."""

from __future__ import annotations

import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from cluster_tests.conftest import Cluster
from compat_tests.broker_process import free_port


def start_with_metrics(cluster: Cluster, extra: dict[str, str] | None = None) -> dict[int, int]:
    """Brokers 1-3 started, each with ``metrics.listener`` on a free port (and ``extra``); node id -> port."""
    ports = {node_id: free_port() for node_id in (1, 2, 3)}
    for node_id, port in ports.items():
        cluster.start_broker(node_id, {"metrics.listener": f"http://127.0.0.1:{port}", **(extra or {})})
    return ports


def scrape(port: int) -> dict[str, float]:
    """The unlabelled samples of a broker's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}


def scrape_until(port: int, name: str, wanted: float, timeout: float = 60) -> dict[str, float]:
    """Scrape until ``name`` reads ``wanted``; the last scrape."""
    deadline = time.monotonic() + timeout
    while (seen := scrape(port)).get(name) != wanted:
        assert time.monotonic() < deadline, f"{name} is {seen.get(name)}, not {wanted}"
        time.sleep(0.1)
    return seen
