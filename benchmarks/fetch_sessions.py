"""What fetch sessions (KIP-227) save the broker: CPU per fetch of a consumer of many partitions.

    make bench-fetch-sessions
    python -m benchmarks.fetch_sessions [--partitions 1000] [--idle-seconds 10] [--rounds 2]

Each broker (pykafkad, then Apache Kafka 4.4.0) runs twice: with fetch sessions (the default) and
with `max.incremental.fetch.session.cache.slots=0`, which answers every fetch without one, so the
consumer lists every partition in every request and gets every partition back.  Each run creates a
topic of that many partitions with one record in each; Kafka's Java consumer (ConsumerPerformance,
group `fetch-sessions`) reads them and then waits for more that never come, each fetch a long poll
of `fetch.max.wait.ms` (500 ms).  The broker's CPU is measured over `--idle-seconds` of that waiting,
which starts once the consumer has read the records, less the CPU of as long a time with no consumer
before it (a JVM's own threads, pykafkad's housekeeping), and divided by the fetches sent meanwhile:
counted by pykafkad's request metrics, and taken from the long poll on Kafka (one fetch per
`fetch.max.wait.ms` while nothing arrives; pykafkad's counts agree with that rate).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time
import urllib.request
from pathlib import Path

from benchmarks import kafka_dist
from benchmarks.brokers import (
    ApacheKafka,
    BrokerUnderTest,
    ProcessWatch,
    Pykafkad,
    die_with_parent,
    free_port,
    install_cleanup,
)
from benchmarks.workloads import create_topic

REPO_ROOT = Path(__file__).resolve().parent.parent
NO_SESSIONS = {"max.incremental.fetch.session.cache.slots": "0"}
FETCH_WAIT_MS = 500
FETCHES = re.compile(r'^kafka_network_requestmetrics_requests_total\{[^}]*request="Fetch"[^}]*\} (\S+)$', re.M)


def _fill(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for p in range(partitions):
        producer.produce(topic, b"x" * 100, partition=p)
    producer.flush(60)


def _pykafkad_fetches(metrics_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as answer:
        return sum(float(v) for v in FETCHES.findall(answer.read().decode()))


def measure(broker: BrokerUnderTest, partitions: int, idle_s: float, lib: Path) -> dict[str, float]:
    """One run on a started broker: the broker's CPU seconds per fetch while the consumer idles."""
    metrics_port = free_port() if isinstance(broker, Pykafkad) else 0
    if metrics_port:
        broker.extra_settings["metrics.listener"] = f"http://127.0.0.1:{metrics_port}"
    broker.start()
    try:
        create_topic(broker.bootstrap, "sessions", partitions)
        _fill(broker.bootstrap, "sessions", partitions)
        # The broker's own background work (a JVM's threads, pykafkad's housekeeping) is measured
        # first, with no consumer, and taken out of the figure per fetch.
        with ProcessWatch(broker.pid) as idle:
            time.sleep(idle_s)
        cmd = kafka_dist.tool_command("org.apache.kafka.tools.ConsumerPerformance", [
            "--bootstrap-server", broker.bootstrap, "--topic", "sessions", "--group", "fetch-sessions",
            "--messages", str(partitions + 1), "--timeout", str(int((idle_s + 30) * 1000)),
            "--consumer.config", "/dev/null"], lib)
        consumer = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    preexec_fn=die_with_parent)
        try:
            # The consumer has joined and read the records well within this (the group forms at once).
            time.sleep(10)
            fetches0 = _pykafkad_fetches(metrics_port) if metrics_port else 0.0
            with ProcessWatch(broker.pid) as watch:
                time.sleep(idle_s)
            fetches = (_pykafkad_fetches(metrics_port) - fetches0) if metrics_port else idle_s * 1000 / FETCH_WAIT_MS
            if consumer.poll() is not None:
                raise RuntimeError(f"the consumer exited early (code {consumer.returncode})")
        finally:
            consumer.terminate()
            consumer.wait(30)
        fetching = max(0.0, watch.usage.cpu_s - idle.usage.cpu_s)
        return {"cpu_s_per_s": watch.usage.cpu_s / idle_s, "idle_cpu_s_per_s": idle.usage.cpu_s / idle_s,
                "fetches": fetches, "cpu_ms_per_fetch": fetching * 1000 / fetches if fetches else float("nan")}
    finally:
        broker.stop()
        broker.extra_settings.clear()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work-dir", type=Path, default=REPO_ROOT / ".cache" / "bench" / "fetch-sessions")
    args = ap.parse_args(argv)
    install_cleanup()
    lib = kafka_dist.ensure_jars()
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for make in (lambda: Pykafkad(args.work_dir), lambda: ApacheKafka(args.work_dir, lib)):
            for mode, settings in (("sessions", {}), ("no sessions", NO_SESSIONS)):
                broker = make()
                broker.extra_settings.update(settings)
                got = measure(broker, args.partitions, args.idle_seconds, lib)
                rows.setdefault((broker.name, mode), []).append(got)
                print(f"{broker.name:9} {mode:12} {got['cpu_ms_per_fetch']:8.3f} ms CPU per fetch, "
                      f"{got['cpu_s_per_s']:.4f} CPU s/s ({got['idle_cpu_s_per_s']:.4f} with no consumer), "
                      f"{got['fetches']:.0f} fetches", flush=True)
    print(f"\n| broker | fetch sessions | broker CPU ms per fetch ({args.partitions} partitions), each round "
          "| mean | broker CPU s per s with the consumer / without |")
    print("|---|---|---|---:|---|")
    for (name, mode), got in rows.items():
        per = [g["cpu_ms_per_fetch"] for g in got]
        cpu = "; ".join(f"{g['cpu_s_per_s']:.3f} / {g['idle_cpu_s_per_s']:.3f}" for g in got)
        print(f"| {name} | {mode} | {' / '.join(f'{x:.3f}' for x in per)} | {statistics.fmean(per):.3f} | {cpu} |")


if __name__ == "__main__":
    main()
