"""What broker-side schema validation costs (issue 29): produce throughput and broker CPU with each
level of ``*.schema.validation`` on and off, against Apache Kafka with none in the same run.

One pykafkad broker runs its registry (``schema.registry.listener``); librdkafka produces N records
of about 100 bytes (acks=1, 8 partitions, linger.ms=5: the small-record case, where per-record
work weighs most), each a value made by confluent-kafka's AvroSerializer or JSONSerializer, into a
fresh topic per round:

- ``off``: no validation (Apache Kafka gets the same bytes, as the reference);
- ``id``: ``confluent.value.schema.validation=true``, the schema id checked in Rust;
- ``full``: ``pykafkad.value.schema.validation=full``, each value also decoded against its schema.

    make bench-schema          # python -m benchmarks.schema_validation --records 300000 --rounds 3

It writes the "What schema validation costs" section of benchmarks/RESULTS.md (kept when the
single-broker report is written again).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from benchmarks import kafka_dist
from benchmarks.brokers import ApacheKafka, BrokerUnderTest, Pykafkad, cpu_seconds, free_port, install_cleanup
from benchmarks.report import SCHEMA_BEGIN, SCHEMA_END, replace_section

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "RESULTS.md"
PARTITIONS = 8
DISTINCT_VALUES = 1000
ORDER_AVRO = {"type": "record", "name": "Order", "namespace": "bench",
              "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
                         {"name": "qty", "type": "int"}, {"name": "price", "type": "double"}]}
ORDER_JSON = {"type": "object", "title": "Order", "required": ["id", "item", "qty", "price"],
              "properties": {"id": {"type": "integer"}, "item": {"type": "string"},
                             "qty": {"type": "integer"}, "price": {"type": "number"}}}
# (format, level): the topic configs of the level.
LEVELS = {"off": {}, "id": {"confluent.value.schema.validation": "true"},
          "full": {"pykafkad.value.schema.validation": "full"}}


@dataclass
class Run:
    broker: str
    fmt: str
    level: str
    mb_s: list[float]
    cpu_s_per_gb: list[float]

    @property
    def label(self) -> str:
        return f"{self.broker} {self.fmt} {self.level}"


def _orders(count: int) -> list[dict[str, Any]]:
    rng = random.Random(29)
    return [{"id": rng.randrange(2**40), "item": "".join(rng.choices(string.ascii_lowercase, k=60)),
             "qty": rng.randrange(100), "price": round(rng.uniform(1, 500), 2)} for _ in range(count)]


def _values(registry_url: str, fmt: str, topic: str) -> list[bytes]:
    """DISTINCT_VALUES framed values for ``topic``, registering the schema under its value subject."""
    client = SchemaRegistryClient({"url": registry_url})
    if fmt == "avro":
        serializer: Any = AvroSerializer(client, json.dumps(ORDER_AVRO))
    else:
        serializer = JSONSerializer(json.dumps(ORDER_JSON), client)
    ctx = SerializationContext(topic, MessageField.VALUE)
    return [serializer(order, ctx) for order in _orders(DISTINCT_VALUES)]


def _produce(broker: BrokerUnderTest, topic: str, values: list[bytes], records: int) -> tuple[float, float]:
    """MB/s and broker CPU seconds per GB for ``records`` of ``values`` into ``topic``."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "1", "linger.ms": 5,
                         "queue.buffering.max.messages": 1_000_000, "retries": 0})
    failed: list[Any] = []

    def report(err: Any, _msg: Any) -> None:
        if err is not None:
            failed.append(err)

    sent = sum(len(values[i % len(values)]) for i in range(records))
    cpu0, began = cpu_seconds(broker.pid), time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, values[i % len(values)], on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(600)
    elapsed, cpu = time.perf_counter() - began, cpu_seconds(broker.pid) - cpu0
    if failed:
        raise RuntimeError(f"{len(failed)} records to {topic} failed on {broker.name}, e.g. {failed[0]}")
    return sent / elapsed / 1e6, cpu / (sent / 1e9)


def _create(broker: BrokerUnderTest, topic: str, configs: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1, config=configs)])[topic].result(60)


def _wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _rounds(broker: BrokerUnderTest, fmt: str, level: str, rounds: int, records: int,
            values: Callable[[str], list[bytes]]) -> Run:
    """``rounds`` produce runs into fresh topics at ``level``; ``values(topic)`` gives what to send."""
    run = Run(broker.name, fmt, level, [], [])
    for r in range(rounds):
        topic = f"{fmt}-{level}-{r}"
        _create(broker, topic, LEVELS[level])
        mb_s, cpu = _produce(broker, topic, values(topic), records)
        run.mb_s.append(mb_s)
        run.cpu_s_per_gb.append(cpu)
        print(f"{run.label} round {r + 1}: {mb_s:.1f} MB/s, {cpu:.2f} CPU s/GB", file=sys.stderr)
    return run


def measure(records: int, rounds: int, formats: list[str], with_kafka: bool) -> tuple[list[Run], str]:
    work = Path(tempfile.mkdtemp(prefix="bench-schema-"))
    pykafkad = Pykafkad(work / "pykafkad")
    registry_url = f"http://127.0.0.1:{free_port()}"
    pykafkad.extra_settings = {"schema.registry.listener": registry_url, "offsets.topic.replication.factor": "1"}
    runs: list[Run] = []
    values: dict[str, list[bytes]] = {}
    pykafkad.start()
    try:
        _wait_http(registry_url + "/")
        versions = f"pykafkad {pykafkad.version()}"
        for fmt in formats:
            def registered(topic: str, fmt: str = fmt) -> list[bytes]:
                # Every topic's subject holds the schema (TopicNameStrategy), as a serializer registers it.
                values[fmt] = _values(registry_url, fmt, topic)
                return values[fmt]

            runs += [_rounds(pykafkad, fmt, level, rounds, records, registered) for level in LEVELS]
    finally:
        pykafkad.stop()
    if with_kafka:
        kafka = ApacheKafka(work / "kafka", kafka_dist.ensure_jars())
        kafka.start()
        try:
            versions += f", Apache Kafka {kafka.version()}"
            runs += [_rounds(kafka, fmt, "off", rounds, records, lambda _topic, fmt=fmt: values[fmt])
                     for fmt in formats]
        finally:
            kafka.stop()
    return runs, versions


def section(runs: list[Run], records: int, rounds: int, versions: str, command: str) -> str:
    off = {r.fmt: r for r in runs if r.broker == "pykafkad" and r.level == "off"}
    kafka = {r.fmt: r for r in runs if r.broker == "kafka"}
    lines = [
        SCHEMA_BEGIN,
        "## What schema validation costs",
        "",
        f"`{command}` ({versions}, {time.strftime('%Y-%m-%d')}): librdkafka produces {records:,} values of about "
        f"100 bytes, made by confluent-kafka's serializers, acks=1, {PARTITIONS} partitions, linger.ms=5; the "
        f"median of {rounds} rounds, each into a fresh topic. `id` is `confluent.value.schema.validation=true` "
        "(the schema id checked in Rust); `full` is `pykafkad.value.schema.validation=full` (each value also "
        "decoded against its schema in Python). The ratios are against pykafkad without validation, and "
        "against Apache Kafka, which validates nothing, given the same bytes.",
        "",
        "| format | validation | produce MB/s | vs off | vs Kafka | broker CPU s per GB |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for run in runs:
        if run.broker != "pykafkad":
            continue
        mb_s = statistics.median(run.mb_s)
        base = statistics.median(off[run.fmt].mb_s)
        versus_kafka = (f"{mb_s / statistics.median(kafka[run.fmt].mb_s):.2f}" if run.fmt in kafka else "–")
        lines.append(f"| {run.fmt} | {run.level} | {mb_s:.1f} | {mb_s / base:.2f} | {versus_kafka} | "
                     f"{statistics.median(run.cpu_s_per_gb):.2f} |")
    for fmt, run in kafka.items():
        lines.append(f"| {fmt} | Apache Kafka (none) | {statistics.median(run.mb_s):.1f} | – | 1.00 | "
                     f"{statistics.median(run.cpu_s_per_gb):.2f} |")
    lines += ["", SCHEMA_END]
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    replace_section(RESULTS, text, SCHEMA_BEGIN, SCHEMA_END)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--formats", default="avro,json")
    ap.add_argument("--no-kafka", action="store_true", help="pykafkad only (no Apache Kafka reference)")
    ap.add_argument("--no-write", action="store_true", help="print, do not touch RESULTS.md")
    args = ap.parse_args(argv)
    install_cleanup()
    runs, versions = measure(args.records, args.rounds, args.formats.split(","), not args.no_kafka)
    command = "python -m benchmarks.schema_validation " + " ".join(argv if argv is not None else sys.argv[1:])
    text = section(runs, args.records, args.rounds, versions, command.strip())
    print(text)
    if not args.no_write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
