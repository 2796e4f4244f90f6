"""What the broker's metrics cost: one pykafkad broker per run, librdkafka producing N records of
100 bytes (acks=1, 8 partitions, the small-record case where per-request work weighs most) and
then consuming them, in three variants run in turn:

- ``base``: a checkout from before the metrics (``--base DIR``, e.g. a git worktree of 723e98b with
  the same built ``_rust_log``);
- ``plain``: this checkout without ``metrics.listener`` (per-topic counters only);
- ``metrics``: this checkout with ``metrics.listener`` (request counters, latency histograms, errors).

    python -m benchmarks.metrics_cost --base /tmp/base-metrics --records 1000000 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.loopback_ports import free_port

REPO_ROOT = Path(__file__).resolve().parent.parent


def run_once(root: Path, records: int, metrics: bool) -> tuple[float, float]:
    """Produce then consume MB/s against a fresh broker from ``root``."""
    port, data = free_port(), tempfile.mkdtemp(prefix="metrics-cost-")
    args = [sys.executable, "-m", "pykafkad", "serve", str(root / "configs" / "server.properties"),
            "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
            "--override", f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}", "--override", f"log.dirs={data}"]
    if metrics:
        args += ["--override", f"metrics.listener=http://127.0.0.1:{free_port()}"]
    broker = subprocess.Popen(args, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": str(root)})
    try:
        bootstrap = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("cost", 8, 1)])["cost"].result(timeout=60)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5,
                             "queue.buffering.max.messages": 2_000_000})
        value = b"x" * 100
        began = time.perf_counter()
        for _ in range(records):
            while True:
                try:
                    producer.produce("cost", value)
                    break
                except BufferError:
                    producer.poll(0.01)
        producer.flush(300)
        produce_s = time.perf_counter() - began
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cost", "fetch.queue.backoff.ms": 10})
        consumer.assign([TopicPartition("cost", p, 0) for p in range(8)])
        got, began = 0, time.perf_counter()
        while got < records:
            got += sum(1 for m in consumer.consume(10_000, 1.0) if m.error() is None)
        consume_s = time.perf_counter() - began
        consumer.close()
        return records * 100 / produce_s / 1e6, records * 100 / consume_s / 1e6
    finally:
        broker.terminate()
        broker.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="a checkout from before the metrics")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    variants = {"base": (args.base, False), "plain": (REPO_ROOT, False), "metrics": (REPO_ROOT, True)}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, (root, metrics) in variants.items():
            produce, consume = run_once(root, args.records, metrics)
            figures[name].append((produce, consume))
            print(f"{name} produce {produce:.1f} MB/s, consume {consume:.1f} MB/s", flush=True)
    for name, runs in figures.items():
        produce, consume = (statistics.fmean(r[i] for r in runs) for i in (0, 1))
        print(f"{name}: produce {produce:.1f} MB/s, consume {consume:.1f} MB/s (mean of {len(runs)})")


if __name__ == "__main__":
    main()
