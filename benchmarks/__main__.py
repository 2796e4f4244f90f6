"""pykafkad against Apache Kafka, same machine, same run.

    python -m benchmarks [--profile full|matrix|quick|smoke] [--rounds N] [--out DIR] [--only TEXT]
    python -m benchmarks report DIR/results.json      # re-render RESULTS.md and the chart
    python -m benchmarks report DIR/results.json OTHER/results.json   # add OTHER's workloads first

For every workload, each round runs it on pykafkad, on pykafkad with ``metrics.listener`` set and
scraped every second, and then on Kafka (A M B A M B ...), each on a freshly started broker with an
empty log directory; only one broker runs at a time.  Raw figures
go to DIR/results.json after every run; DIR/RESULTS.md and DIR/results.png are written at the end.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks import kafka_dist, machine_speed, report
from benchmarks.brokers import (
    ApacheKafka,
    BrokerUnderTest,
    Pykafkad,
    PykafkadWithMetrics,
    empty_trash,
    install_cleanup,
)
from benchmarks.workloads import Latency, Scale, Throughput

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent

# How long ext4 without a journal skips freed inodes one by one (its recently_deleted(), for an
# inode table block written out): the creation workload starts at least this long after a deletion.
TRASH_QUIET_S = 65.0
# From how many partitions a creation is worth that wait (the smoke profile's 20 are not).
QUIET_CREATION_PARTITIONS = 500

PROFILES: dict[str, dict[str, Any]] = {
    # Every dimension of the issue appears at least once; `--profile matrix` runs the cross product.
    "full": {"rounds": 3, "out": BENCH_DIR, "workloads": [
        Throughput("java", 100, 1, "1", "none", 1_000_000),
        Throughput("java", 100, 8, "all", "lz4", 1_000_000),
        Throughput("java", 1024, 1, "all", "none", 200_000),
        Throughput("java", 1024, 8, "1", "lz4", 200_000),
        Throughput("librdkafka", 100, 8, "1", "none", 1_000_000),
        Throughput("librdkafka", 1024, 1, "all", "lz4", 200_000),
        # The same as the 100-byte librdkafka workload, with the consumer's queue-full pause cut to
        # 10 ms: what each broker delivers when librdkafka does not stop for a second (see NOTES.md).
        Throughput("librdkafka", 100, 8, "1", "none", 1_000_000,
                   consumer_config=(("fetch.queue.backoff.ms", "10"),)),
        # Transactions (version 2 on both brokers): a commit every 100 ms, read back read_committed.
        Throughput("java", 1024, 8, "all", "none", 200_000, consumer_config=(("isolation.level", "read_committed"),),
                   transaction_ms=100),
        Latency("librdkafka", 100, 1000, 10.0, "1"),
        Latency("librdkafka", 1024, 5000, 10.0, "all"),
        Latency("librdkafka", 1024, 2000, 10.0, "all"),
        Latency("java", 1024, 200, 10.0, "1"),
        Scale(2000, 1000, 10.0),
    ]},
    # Every combination of record size, partitions, acks and compression, with both clients (long).
    "matrix": {"rounds": 2, "out": REPO_ROOT / ".cache" / "bench" / "matrix", "workloads": [
        Throughput(client, size, parts, acks, comp, 1_000_000 if size == 100 else 200_000)
        for client in ("java", "librdkafka") for size in (100, 1024) for parts in (1, 8)
        for acks in ("1", "all") for comp in ("none", "lz4")
    ] + [Latency("librdkafka", 100, 1000, 10.0, "1"), Latency("librdkafka", 1024, 5000, 10.0, "all"),
         Latency("java", 1024, 200, 10.0, "1"), Scale(2000, 1000, 10.0)]},
    # Under five minutes on an idle 2-core machine: one of each kind, small.
    "quick": {"rounds": 2, "out": REPO_ROOT / ".cache" / "bench" / "quick", "workloads": [
        Throughput("java", 100, 1, "1", "none", 300_000),
        Throughput("librdkafka", 1024, 8, "all", "lz4", 30_000),
        Latency("librdkafka", 1024, 1000, 4.0, "1"),
        Scale(200, 200, 2.0),
    ]},
    # Consume as a new user tries it (issue 32): 300 MB of 1 KiB records on 4 partitions, 100-byte
    # records, and the same read back from disk after the page cache is dropped (needs root).
    "fetch": {"rounds": 3, "out": REPO_ROOT / ".cache" / "bench" / "fetch", "workloads": [
        Throughput("java", 1024, 4, "1", "none", 300_000),
        Throughput("java", 100, 4, "1", "none", 2_000_000),
        Throughput("java", 1024, 4, "1", "none", 300_000, cold_reads=True),
    ]},
    # Partitions at scale (issue 32): 10,000 on one broker, beside the 2,000 of the full profile.
    "scale": {"rounds": 2, "out": REPO_ROOT / ".cache" / "bench" / "scale", "workloads": [
        Scale(10000, 1000, 10.0),
    ]},
    # Tiny sizes for the harness's own smoke test: does every path run and report (the latency
    # warm-ups too, but short: their figures mean nothing here).
    "smoke": {"rounds": 1, "out": REPO_ROOT / ".cache" / "bench" / "smoke", "workloads": [
        Throughput("java", 100, 2, "all", "none", 2000, consumer_config=(("isolation.level", "read_committed"),),
                   transaction_ms=100),
        Throughput("librdkafka", 1024, 2, "all", "lz4", 1000, consumer_config=(("fetch.queue.backoff.ms", "10"),)),
        Latency("librdkafka", 100, 200, 1.0, "1", warmup_s=0.5),
        Latency("java", 100, 50, 1.0, "1", warmup_s=0.5),
        Scale(20, 20, 0.5),
    ]},
}


def loadavg() -> dict[str, float]:
    with open("/proc/loadavg") as f:
        a, b, c = (float(x) for x in f.read().split()[:3])
    return {"t": time.time(), "1m": a, "5m": b, "15m": c}


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) / 1e6
    except OSError:
        pass
    disk = "unknown"
    try:
        st = os.stat(REPO_ROOT)
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            parts = line.split()
            if parts[2] == f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}":
                disk = f"{parts[-2]} ({parts[8] if len(parts) > 8 else '?'}) mounted at {parts[4]}"
                break
    except (OSError, IndexError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count() or 0, "mem_gb": mem, "kernel": platform.platform(), "disk": disk}


def _first(v: object) -> str:
    return str(v[0]) if isinstance(v, tuple) else str(v)


def versions(lib: Path, root: Path) -> dict[str, str]:
    import confluent_kafka

    return {"pykafkad": Pykafkad(REPO_ROOT, root).version(), "kafka": ApacheKafka(REPO_ROOT, lib).version(),
            "python": f"Python {platform.python_version()}", "librdkafka": _first(confluent_kafka.libversion()),
            "confluent_kafka": _first(confluent_kafka.version())}


def run(args: argparse.Namespace) -> Path:
    profile = PROFILES[args.profile]
    rounds = args.rounds or profile["rounds"]
    out_dir = Path(args.out) if args.out else Path(profile["out"])
    out_dir.mkdir(parents=True, exist_ok=True)
    workloads = [w for w in profile["workloads"] if not args.only or args.only in w.key]
    lib = kafka_dist.ensure_jars()
    work = REPO_ROOT / ".cache" / "bench" / "run"
    root = Path(args.pykafkad_root).resolve() if args.pykafkad_root else REPO_ROOT
    brokers: dict[str, BrokerUnderTest] = {"pykafkad": Pykafkad(work, root),
                                           "pykafkad-metrics": PykafkadWithMetrics(work, root),
                                           "kafka": ApacheKafka(work, lib)}
    unknown = set(args.brokers.split(",")) - set(brokers)
    if unknown:
        raise SystemExit(f"--brokers: unknown {', '.join(sorted(unknown))}; choose from {', '.join(brokers)}")
    order = [b for b in brokers if b in args.brokers.split(",")]
    results: dict[str, Any] = {
        "meta": {"command": args.command_line, "profile": args.profile, "rounds": rounds,
                 "started": datetime.datetime.now().isoformat(timespec="seconds"), "machine": machine(),
                 "versions": versions(lib, root), "loadavg": [], "machine_speed": []},
        "workloads": [{"description": w.describe(), "runs": []} for w in workloads],
    }
    results_path = out_dir / "results.json"
    emptied = time.monotonic() if empty_trash(work) else -math.inf
    for wl, entry in zip(workloads, results["workloads"], strict=True):
        if isinstance(wl, Scale) and wl.partitions >= QUIET_CREATION_PARTITIONS:
            # No deletion in the minute before a creation is timed (brokers.set_aside says why).
            quiet = emptied + TRASH_QUIET_S - time.monotonic()
            if quiet > 0:
                print(f"[{time.strftime('%H:%M:%S')}] waiting {quiet:.0f}s: no deletion in the "
                      f"{TRASH_QUIET_S:.0f}s before partitions are created", flush=True)
                time.sleep(quiet)
        elif empty_trash(work):
            emptied = time.monotonic()
        for rnd in range(rounds):
            for name in order:
                broker = brokers[name]
                results["meta"]["machine_speed"].append(machine_speed.sample())
                results["meta"]["loadavg"].append(loadavg())
                record: dict[str, Any] = {"broker": name, "round": rnd}
                print(f"[{time.strftime('%H:%M:%S')}] {wl.key} — {name} round {rnd + 1}/{rounds}", flush=True)
                try:
                    record["startup_s"] = broker.start()
                    if isinstance(broker, ApacheKafka):
                        record["format_s"] = broker.format_s
                    record["metrics"] = wl.run(broker, lib)
                    if isinstance(broker, PykafkadWithMetrics):
                        record["scrape"] = broker.scraper.stats()
                    print(f"    startup {record['startup_s']:.2f}s "
                          + ", ".join(f"{k}={v:.4g}" for k, v in record["metrics"].items()), flush=True)
                except Exception as e:  # noqa: BLE001 - one failed run is reported, the rest go on
                    record["error"] = f"{type(e).__name__}: {e}"
                    print(f"    FAILED: {record['error'][:2000]}", flush=True)
                    if args.verbose:
                        traceback.print_exc()
                finally:
                    broker.stop()
                results["meta"]["loadavg"].append(loadavg())
                entry["runs"].append(record)
                results_path.write_text(json.dumps(results, indent=1))
    empty_trash(work)
    results["meta"]["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    results_path.write_text(json.dumps(results, indent=1))
    md = report.write_report(results_path)
    print(f"wrote {md} and {results_path}", flush=True)
    return md


def main(argv: list[str]) -> int:
    if argv[:1] == ["report"]:
        if len(argv) < 2:
            raise SystemExit("usage: python -m benchmarks report DIR/results.json [MORE/results.json ...]")
        if len(argv) > 2:
            report.merge_into(Path(argv[1]), [Path(a) for a in argv[2:]])
        print(report.write_report(Path(argv[1])))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="full")
    parser.add_argument("--rounds", type=int, default=0, help="rounds of A B per workload (default: the profile's)")
    parser.add_argument("--out", help="directory for results.json, RESULTS.md, results.png")
    parser.add_argument("--only", help="run only workloads whose name contains this text")
    parser.add_argument("--brokers", default="pykafkad,pykafkad-metrics,kafka",
                        help="comma-separated subset of %(default)s (pykafkad-metrics: with metrics.listener, "
                        "scraped every second)")
    parser.add_argument("--pykafkad-root", help="run pykafkad from this checkout (with its built _rust_log), "
                        "e.g. a git worktree of a baseline commit; default: this one")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    args.command_line = " ".join(shlex.quote(a) for a in ["python", "-m", "benchmarks", *argv])
    install_cleanup()
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
