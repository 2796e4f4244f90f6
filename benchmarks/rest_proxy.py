"""What going through the REST proxy costs (issue 30): records per second produced and consumed over
HTTP, against librdkafka producing and consuming natively, on the same pykafkad broker in the same
run (the proxy runs in the broker, ``rest.listener``).

N JSON records of 1 KiB each, into a fresh 8-partition topic per workload and round:

- ``native produce``: librdkafka, acks=all (as the proxy's producer), linger.ms=5;
- ``v2 produce``: ``POST /topics/{topic}`` with 100 records per request, from 4 client threads;
- ``v3 streaming``: ``POST /v3/clusters/{id}/topics/{topic}/records``, all N records in one chunked
  request, 100 per chunk, every answer line read;
- ``native consume``: librdkafka reads the N records back;
- ``v2 consume``: a v2 consumer instance (json format) reads them back, ``GET .../records`` in a loop.

Beside the rates, the broker's CPU time per HTTP request, for a v2 produce of 100 records and for
``GET /`` (an empty answer): the second is what the HTTP stack alone costs, the floor under the first.

    make bench-rest            # python -m benchmarks.rest_proxy --records 100000 --rounds 3

It writes the "What the REST proxy costs" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from benchmarks.brokers import Pykafkad, cpu_seconds, free_port, install_cleanup
from benchmarks.report import REST_BEGIN, REST_END, replace_section

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "RESULTS.md"
PARTITIONS = 8
BATCH = 100
PRODUCER_THREADS = 4
V2 = "application/vnd.kafka.v2+json"
JSON_RECORDS = "application/vnd.kafka.json.v2+json"
# A 1 KiB JSON document.
VALUE = {"id": 0, "payload": "x" * 1000}


@dataclass
class Workload:
    name: str
    rates: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def _create(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)


def _native_produce(bootstrap: str, topic: str, records: int) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
                         "queue.buffering.max.messages": 1_000_000})
    value = json.dumps(VALUE).encode()
    began = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(600) == 0
    return records / (time.perf_counter() - began)


def _empty_requests(url: str, requests: int) -> None:
    """``GET /`` ``requests`` times from PRODUCER_THREADS threads: the HTTP stack with nothing behind it."""
    def client(count: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            for _ in range(count):
                http.get("/").raise_for_status()

    threads = [threading.Thread(target=client, args=(requests // PRODUCER_THREADS,)) for _ in range(PRODUCER_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _v2_produce(url: str, topic: str, records: int) -> float:
    body = json.dumps({"records": [{"value": VALUE}] * BATCH}).encode()
    requests = records // BATCH
    failures: list[str] = []

    def client(count: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            for _ in range(count):
                answer = http.post(f"/topics/{topic}", headers={"Content-Type": JSON_RECORDS}, content=body)
                if answer.status_code != 200 or any(o["error_code"] for o in answer.json()["offsets"]):
                    failures.append(answer.text[:200])
                    return

    shares = [requests // PRODUCER_THREADS + (1 if i < requests % PRODUCER_THREADS else 0)
              for i in range(PRODUCER_THREADS)]
    threads = [threading.Thread(target=client, args=(n,)) for n in shares]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise RuntimeError(f"v2 produce failed: {failures[0]}")
    return requests * BATCH / (time.perf_counter() - began)


def _v3_streaming(url: str, cluster_id: str, topic: str, records: int) -> float:
    line = json.dumps({"value": {"type": "JSON", "data": VALUE}}).encode() + b"\n"
    chunk = line * BATCH

    def chunks() -> object:
        for _ in range(records // BATCH):
            yield chunk

    began = time.perf_counter()
    answered = 0
    with httpx.Client(base_url=url, timeout=600) as http, http.stream(
            "POST", f"/v3/clusters/{cluster_id}/topics/{topic}/records",
            headers={"Content-Type": "application/json"}, content=chunks()) as answer:
        for text in answer.iter_lines():
            if text:
                if json.loads(text)["error_code"] != 200:
                    raise RuntimeError(f"v3 produce failed: {text[:200]}")
                answered += 1
    if answered != records // BATCH * BATCH:
        raise RuntimeError(f"v3 streaming answered {answered} of {records // BATCH * BATCH} records")
    return answered / (time.perf_counter() - began)


def _native_consume(bootstrap: str, topic: str, records: int) -> float:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-native", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got = 0
    began = time.perf_counter()
    try:
        while got < records:
            got += sum(1 for m in consumer.consume(1000, 1.0) if m.error() is None)
    finally:
        consumer.close()
    return got / (time.perf_counter() - began)


def _v2_consume(url: str, topic: str, records: int) -> float:
    with httpx.Client(base_url=url, timeout=120) as http:
        group = f"{topic}-http"
        made = http.post(f"/consumers/{group}", headers={"Content-Type": V2},
                         json={"name": "bench", "format": "json", "auto.offset.reset": "earliest",
                               "auto.commit.enable": "false"})
        made.raise_for_status()
        base = f"/consumers/{group}/instances/bench"
        http.post(base + "/assignments", headers={"Content-Type": V2},
                  json={"partitions": [{"topic": topic, "partition": p} for p in range(PARTITIONS)]}).raise_for_status()
        got = 0
        began = time.perf_counter()
        while got < records:
            answer = http.get(base + "/records", params={"timeout": 1000}, headers={"Accept": JSON_RECORDS})
            answer.raise_for_status()
            got += len(answer.json())
        rate = got / (time.perf_counter() - began)
        http.delete(base)
    return rate


def measure(records: int, rounds: int) -> tuple[dict[str, Workload], dict[str, float], str]:
    work = Path(tempfile.mkdtemp(prefix="bench-rest-"))
    broker = Pykafkad(work / "pykafkad")
    url = f"http://127.0.0.1:{free_port()}"
    broker.extra_settings = {"rest.listener": url, "offsets.topic.replication.factor": "1"}
    names = ["native produce", "v2 produce", "v3 streaming", "native consume", "v2 consume"]
    results = {n: Workload(n) for n in names}
    # The broker's CPU milliseconds per HTTP request: "produce" (v2, BATCH records) and "empty" (GET /).
    per_request: dict[str, list[float]] = {"produce": [], "empty": []}
    broker.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/topics", timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        cluster_id = httpx.get(url + "/v3/clusters").json()["data"][0]["cluster_id"]
        for r in range(rounds):
            topics = {n: f"{n.replace(' ', '-')}-{r}" for n in ("native produce", "v2 produce", "v3 streaming")}
            for topic in topics.values():
                _create(broker.bootstrap, topic)
            native_produce = _native_produce(broker.bootstrap, topics["native produce"], records)
            before = cpu_seconds(broker.pid)
            v2_produce = _v2_produce(url, topics["v2 produce"], records)
            per_request["produce"].append(1000 * (cpu_seconds(broker.pid) - before) / (records // BATCH))
            before = cpu_seconds(broker.pid)
            _empty_requests(url, 2000)
            per_request["empty"].append(1000 * (cpu_seconds(broker.pid) - before) / 2000)
            rates = {
                "native produce": native_produce,
                "v2 produce": v2_produce,
                "v3 streaming": _v3_streaming(url, cluster_id, topics["v3 streaming"], records),
                "native consume": _native_consume(broker.bootstrap, topics["native produce"], records),
                "v2 consume": _v2_consume(url, topics["native produce"], records),
            }
            for name, rate in rates.items():
                results[name].rates.append(rate)
                print(f"round {r + 1}: {name}: {rate:,.0f} records/s", file=sys.stderr)
        version = f"pykafkad {broker.version()}"
    finally:
        broker.stop()
    return results, {k: statistics.median(v) for k, v in per_request.items()}, version


def section(results: dict[str, Workload], per_request: dict[str, float], records: int, rounds: int, version: str,
            command: str) -> str:
    native = {"produce": results["native produce"].median, "consume": results["native consume"].median}
    lines = [
        REST_BEGIN,
        "## What the REST proxy costs",
        "",
        f"`{command}` ({version}, {time.strftime('%Y-%m-%d')}): {records:,} JSON records of 1 KiB into a fresh "
        f"{PARTITIONS}-partition topic per workload, the median of {rounds} rounds; the proxy runs in the broker "
        f"(`rest.listener`). v2 produce sends {BATCH} records per request from {PRODUCER_THREADS} client threads; "
        f"v3 streams all records in one chunked request, {BATCH} per chunk; v2 consume reads through one consumer "
        "instance. Each ratio is against librdkafka doing the same natively, on the same broker in the same run. "
        "Target (issue 30): HTTP produce at 25% or more of native records/s.",
        "",
        "| workload | records/s | vs native |",
        "|---|---:|---:|",
    ]
    for name, workload in results.items():
        kind = "consume" if "consume" in name else "produce"
        ratio = "1.00" if name.startswith("native") else f"{workload.median / native[kind]:.2f}"
        lines.append(f"| {name} | {workload.median:,.0f} | {ratio} |")
    lines += ["", f"The broker's CPU time per HTTP request: {per_request['produce']:.2f} ms for a v2 produce of "
              f"{BATCH} records, {per_request['empty']:.2f} ms for `GET /` (an empty answer, the HTTP stack alone).",
              "", REST_END]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-write", action="store_true", help="print, do not touch RESULTS.md")
    args = ap.parse_args(argv)
    install_cleanup()
    results, per_request, version = measure(args.records, args.rounds)
    command = "python -m benchmarks.rest_proxy " + " ".join(argv if argv is not None else sys.argv[1:])
    text = section(results, per_request, args.records, args.rounds, version, command.strip())
    print(text)
    if not args.no_write:
        replace_section(RESULTS, text, REST_BEGIN, REST_END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
