"""The three-broker cluster benchmark (benchmarks/cluster.py) writes its own section of RESULTS.md and
keeps the rest, the single-broker report keeps that section, and a tiny pykafkad-only run works.

Kafka's three-node KRaft cluster is left out of the smoke run: formatting and starting it takes
30-40 s on a 2-core machine before any workload.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import cluster, kafka_dist, report
from cluster_tests.zookeeper_server import ZOOKEEPER_LIB

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_cluster_section_is_replaced_in_place_and_survives_a_regenerated_report(tmp_path: Path) -> None:
    md = tmp_path / "RESULTS.md"
    md.write_text("# single broker\n\nfigures\n")
    cluster.update_results_md(f"{cluster.BEGIN}\nfirst\n{cluster.END}", md)
    cluster.update_results_md(f"{cluster.BEGIN}\nsecond\n{cluster.END}", md)
    text = md.read_text()
    assert text.startswith("# single broker\n\nfigures\n") and "second" in text and "first" not in text
    assert text.count(cluster.BEGIN) == 1
    shutil.copy(REPO_ROOT / "benchmarks" / "results.json", tmp_path / "results.json")
    report.write_report(tmp_path / "results.json")
    regenerated = md.read_text()
    assert regenerated.startswith("# pykafkad against Apache Kafka")
    assert report.cluster_section(regenerated) == f"{cluster.BEGIN}\nsecond\n{cluster.END}"


@pytest.mark.skipif(not (shutil.which("java") and (ZOOKEEPER_LIB / "zookeeper-jute-3.9.4.jar").exists()
                         and kafka_dist.LIB.is_dir()),
                    reason="needs java, `make zookeeper-deps` and the Kafka jars (`make bench-deps`)")
def test_a_tiny_pykafkad_cluster_run_reports(tmp_path: Path) -> None:
    md = tmp_path / "RESULTS.md"
    md.write_text("# kept\n")
    done = subprocess.run([sys.executable, "-m", "benchmarks.cluster", "--records", "500", "--small-records", "1000",
                           "--latency-seconds", "1", "--creation-partitions", "20", "--rounds", "1",
                           "--brokers", "pykafkad",
                           "--out", str(tmp_path / "out"), "--results-md", str(md)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    [run] = results["runs"]
    assert "error" not in run, run
    assert run["startup"]["start_s"] > 0 and run["exit_codes"] == {f"pykafkad-{i}": 0 for i in (1, 2, 3)}
    for workload in results["workloads"]:
        metrics = run["workloads"][workload["key"]]
        assert "metrics" in metrics, metrics
        if workload["kind"] == "latency":
            assert 0 < metrics["metrics"]["p50_ms"] <= metrics["metrics"]["p99_ms"]
        elif workload["kind"] == "creation":
            assert metrics["metrics"]["create_topic_s"] > 0
        else:
            assert metrics["metrics"]["zookeeper_rss_peak_mb"] > 0
    text = md.read_text()
    assert text.startswith("# kept\n") and "## Three-broker cluster" in text
    assert "end-to-end p99 ms" in text and "### create 20 partitions RF3" in text
