"""Does a broker that answers later make librdkafka consume faster?  The fetch-pause probe.

    python -m benchmarks.fetch_backoff [--delays 0,20,50] [--rounds 2] [--records 1000000]

librdkafka stops fetching a partition for `fetch.queue.backoff.ms` (1 s by default) whenever
its local queue holds `queued.min.messages` (100,000) messages.  A broker that answers faster
than the application drains that queue fills it sooner and so earns more one-second pauses.
This probe shows it without touching either broker: each broker is started with its listener
advertised on a `benchmarks.delay_proxy` port, 1M 100-byte records are produced on 8
partitions, and the same librdkafka `assign()` consumer reads them back several times, each
time through a proxy that holds every response back by a fixed delay.  It prints, per broker
and delay, the consume rate and the number of queue-full pauses librdkafka logged.

The brokers run one at a time, alternating pykafkad and Kafka, as in `python -m benchmarks`.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import kafka_dist
from benchmarks.brokers import ApacheKafka, BrokerUnderTest, Pykafkad, die_with_parent, free_port, install_cleanup
from benchmarks.workloads import create_topic, rdkafka

REPO_ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 8
RECORD_SIZE = 100


def _proxy(listen_port: int, target_port: int, delay_ms: float) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.delay_proxy", str(listen_port), str(target_port),
                             str(delay_ms)], cwd=REPO_ROOT, preexec_fn=die_with_parent)
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", listen_port), timeout=0.5):
                return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"delay proxy on {listen_port} did not start") from None
            time.sleep(0.02)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def probe_broker(broker: BrokerUnderTest, delays: list[float], records: int) -> list[dict[str, float]]:
    """Start `broker` advertised behind a proxy, fill a topic, consume it once per delay."""
    proxy_port = free_port()
    broker.extra_settings["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{proxy_port}"
    proxy = None
    rows = []
    try:
        # The start-up probe reaches the broker through a pass-through proxy (the advertised address).
        port = free_port()
        proxy = _proxy(proxy_port, port, 0)
        broker.start(port)
        bootstrap = f"127.0.0.1:{proxy_port}"
        create_topic(bootstrap, "probe", PARTITIONS)
        rdkafka("produce", {"bootstrap": bootstrap, "topic": "probe", "records": records,
                            "record_size": RECORD_SIZE, "acks": "1"})
        for delay in delays:
            _stop(proxy)
            proxy = _proxy(proxy_port, broker.port, delay)
            got = rdkafka("consume", {"bootstrap": bootstrap, "topic": "probe", "records": records,
                                      "record_size": RECORD_SIZE, "partitions": PARTITIONS})
            rows.append({"delay_ms": delay, "records_s": got["records_s"], "pauses": got["fetch_pauses"]})
            print(f"{broker.name:9} delay {delay:5g} ms: {got['records_s']:10,.0f} records/s, "
                  f"{got['fetch_pauses']} pause(s)", flush=True)
    finally:
        if proxy is not None:
            _stop(proxy)
        broker.stop()
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delays", default="0,20,50", help="response delays in ms, comma-separated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--work-dir", type=Path, default=REPO_ROOT / ".cache" / "bench" / "fetch-backoff")
    args = ap.parse_args(argv)
    delays = [float(d) for d in args.delays.split(",")]
    install_cleanup()
    lib = kafka_dist.ensure_jars()
    table: dict[tuple[str, float], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for broker in (Pykafkad(args.work_dir), ApacheKafka(args.work_dir, lib)):
            for row in probe_broker(broker, delays, args.records):
                table.setdefault((broker.name, row["delay_ms"]), []).append(row)
    print("\n| broker | response delay ms | consume records/s, each round | mean | queue-full pauses |")
    print("|---|---:|---|---:|---|")
    for (name, delay), rows in table.items():
        rates = [r["records_s"] for r in rows]
        print(f"| {name} | {delay:g} | {' / '.join(f'{x:,.0f}' for x in rates)} | "
              f"{statistics.fmean(rates):,.0f} | {' / '.join(str(r['pauses']) for r in rows)} |")


if __name__ == "__main__":
    main()
