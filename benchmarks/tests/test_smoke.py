"""The benchmark harness runs end to end on tiny sizes, and reads its tools' output.

A benchmark is not a test: nothing here asserts a timing or a ratio.  The smoke run starts
each broker (pykafkad, pykafkad with its metrics listener scraped, and a real Kafka from the Maven
jars) once per workload on tiny sizes and checks that every run finished and the report and chart were written.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import report
from benchmarks.rdkafka_client import _count_pauses
from benchmarks.workloads import parse_consumer_perf, parse_end_to_end, parse_producer_perf

REPO_ROOT = Path(__file__).resolve().parents[2]

PRODUCER_OUTPUT = """\
49996 records sent, 9999.2 records/sec (0.95 MB/sec), 3.1 ms avg latency, 230.0 ms max latency.
100000 records sent, 19984.0 records/sec (1.91 MB/sec), 2.53 ms avg latency, 234.00 ms max latency, \
1 ms 50th, 5 ms 95th, 10 ms 99th, 20 ms 99.9th.
"""
CONSUMER_OUTPUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2025-11-21 21:43:47:120, 2025-11-21 21:43:48:220, 0.1907, 0.1734, 2000, 1818.1818, 350, 750, 0.2543, 2666.6667
"""
E2E_OUTPUT = "Avg latency: 2.1400 ms\nPercentiles: 50th = 2, 99th = 7, 99.9th = 12\n"


def test_parses_producer_perf_summary() -> None:
    got = parse_producer_perf(PRODUCER_OUTPUT)
    assert got["records"] == 100000
    assert got["records_s"] == 19984.0
    assert (got["latency_p50_ms"], got["latency_p99_ms"], got["latency_p999_ms"]) == (1, 10, 20)


def test_parses_consumer_perf_line() -> None:
    got = parse_consumer_perf(CONSUMER_OUTPUT)
    assert got == {"records": 2000, "rebalance_ms": 350.0, "fetch_ms": 750.0, "records_s": 2666.6667}


def test_parses_end_to_end_latency() -> None:
    assert parse_end_to_end(E2E_OUTPUT) == {"mean_ms": 2.14, "p50_ms": 2.0, "p99_ms": 7.0, "p999_ms": 12.0}


FETCH_LOG = b"""\
%7|1763769600.100|FETCH|rdkafka#consumer-1| [thrd:127.0.0.1:9092/1]: Fetch 8/8/8 toppar(s)
%7|1763769600.200|BACKOFF|rdkafka#consumer-1| [thrd:127.0.0.1:9092/1]: t [0]: Fetch backoff for 1000ms: \
Local: Queue full
%7|1763769600.201|BACKOFF|rdkafka#consumer-1| [thrd:127.0.0.1:9092/1]: t [1]: Fetch backoff for 1000ms: \
Local: Queue full
%7|1763769600.300|BACKOFF|rdkafka#consumer-1| [thrd:127.0.0.1:9092/1]: t [2]: Fetch backoff for 500ms: \
Broker: Not leader for partition
%7|1763769601.250|BACKOFF|rdkafka#consumer-1| [thrd:127.0.0.1:9092/1]: t [0]: Fetch backoff for 1000ms: \
Local: Queue full
"""


def test_counts_queue_full_pauses_once_per_moment() -> None:
    # Two partitions paused together are one pause; a pause for another reason is not counted.
    assert _count_pauses(FETCH_LOG) == 2
    assert _count_pauses(b"") == 0


@pytest.mark.skipif(not (shutil.which("java") and shutil.which("mvn")), reason="needs java and mvn for Kafka")
def test_harness_runs_both_brokers_on_tiny_sizes(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--profile", "smoke", "--out", str(tmp_path)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = json.loads((tmp_path / "results.json").read_text())
    for workload in results["workloads"]:
        runs = workload["runs"]
        assert {r["broker"] for r in runs} == {"pykafkad", "pykafkad-metrics", "kafka"}, workload["description"]["key"]
        failed = [r for r in runs if "error" in r]
        assert not failed, failed
        if workload["description"].get("client") == "librdkafka" and workload["description"]["kind"] == "throughput":
            assert all(r["metrics"]["consume_fetch_pauses"] >= 0 for r in runs)
    md = (tmp_path / "RESULTS.md").read_text()
    for workload in results["workloads"]:
        assert f"### {workload['description']['key']}" in md
    assert "ratio pykafkad/Kafka" in md
    # pykafkad with metrics.listener was scraped while it ran, and its cost is reported per workload.
    scraped = [r["scrape"] for wl in results["workloads"] for r in wl["runs"] if r["broker"] == "pykafkad-metrics"]
    assert sum(s["scrapes"] for s in scraped) > 0 and not any(s["scrape_failures"] for s in scraped)
    assert "## What `metrics.listener` costs" in md
    for workload in results["workloads"]:
        assert f"| {workload['description']['key']} |" in md.split("## What `metrics.listener` costs")[1]
    try:
        import matplotlib  # noqa: F401 - the chart needs the `bench` extra
    except ImportError:
        pass
    else:
        assert (tmp_path / "results.png").stat().st_size > 0
    # The report can be regenerated from the raw results alone.
    assert report.write_report(tmp_path / "results.json") == tmp_path / "RESULTS.md"
