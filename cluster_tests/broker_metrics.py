"""Three brokers each with a metrics listener, and reading their /metrics (or their console's API) until
a gauge says what a test waits for (the broker's state has caught up with the event)."""

from __future__ import annotations

import json
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


def sample(port: int, name: str, **labels: str) -> float:
    """One labelled sample of a broker's /metrics (0 when absent)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return next((s.value for f in text_string_to_metric_families(text) for s in f.samples
                 if s.name == name and s.labels == labels), 0.0)


def scrape_until(port: int, name: str, wanted: float, timeout: float = 60) -> dict[str, float]:
    """Scrape until ``name`` reads ``wanted``; the last scrape."""
    deadline = time.monotonic() + timeout
    while (seen := scrape(port)).get(name) != wanted:
        assert time.monotonic() < deadline, f"{name} is {seen.get(name)}, not {wanted}"
        time.sleep(0.1)
    return seen


def until_replicas_agree(ports: dict[int, int], topic: str, partitions: int, timeout: float = 60) -> None:
    """Every broker's replica of each partition at the same log start offset and high watermark, which
    is its log end."""
    deadline = time.monotonic() + timeout
    while True:
        seen = {}
        for node_id, port in ports.items():
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/topics/{topic}", timeout=10) as answer:
                for p in json.load(answer)["partitions"]:
                    seen[(node_id, p["partition"])] = (p["log_start_offset"], p["high_watermark"],
                                                       p["log_end_offset"])
        if all(len({seen[(n, i)] for n in ports}) == 1 and seen[(1, i)][1] == seen[(1, i)][2]
               for i in range(partitions)):
            return
        assert time.monotonic() < deadline, f"replicas' (log start, high watermark, log end): {seen}"
        time.sleep(0.1)
