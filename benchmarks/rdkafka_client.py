"""librdkafka (confluent-kafka) load generators, run as their own process by the harness.

    python -m benchmarks.rdkafka_client produce '{"bootstrap": ..., "topic": ..., "records": ..., ...}'
    python -m benchmarks.rdkafka_client consume '{...}'
    python -m benchmarks.rdkafka_client e2e '{...}'

Each prints one JSON object on its last stdout line.  `produce` sends as fast as librdkafka
takes them (client defaults but for acks and compression); `consume` reads every partition
from the beginning with assign() (no group) until it has the records; `e2e` produces at a
fixed rate with the send time (CLOCK_MONOTONIC, shared by every process on the machine) in
each value, while a consumer thread in the same process reads them back and records
receive time minus send time; timing starts once the consumer has read a first sync record.
The e2e producer uses linger.ms=0 so that the latency is the brokers', not the producer's
batching delay.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

_STAMP = struct.Struct(">q")
_SYNC = b"sync"


def _producer(args: dict, **extra: object) -> Producer:
    conf = {"bootstrap.servers": args["bootstrap"], "acks": args.get("acks", "1"),
            "compression.type": args.get("compression", "none"),
            "queue.buffering.max.messages": 1_000_000, "queue.buffering.max.kbytes": 1_048_576}
    conf.update(extra)
    return Producer(conf)


def produce(args: dict) -> dict:
    size = int(args["record_size"])
    records = int(args["records"])
    payload = os.urandom(size // 2).hex().encode()[:size].ljust(size, b"x")
    errors = []

    def on_error(err: object, msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    producer = _producer(args, **{"delivery.report.only.error": True})
    topic = args["topic"]
    send = producer.produce
    t0 = time.monotonic()
    for _ in range(records):
        while True:
            try:
                send(topic, payload, on_delivery=on_error)
                break
            except BufferError:
                producer.poll(0.001)
    left = producer.flush(300)
    elapsed = time.monotonic() - t0
    if left or errors:
        raise SystemExit(f"produce: {left} undelivered, {len(errors)} errors, first: {errors[:1]}")
    return {"records": records, "seconds": elapsed, "records_s": records / elapsed,
            "mb_s": records * size / elapsed / 1e6}


def _assign_all(consumer: Consumer, topic: str, partitions: int) -> None:
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])


def _count_pauses(log: bytes) -> int:
    """Queue-full fetch pauses in librdkafka's `debug=fetch` log: one per moment, however many partitions."""
    stamps = sorted(float(line.split(b"|")[1]) for line in log.splitlines()
                    if b"Fetch backoff" in line and b"Queue full" in line and line.count(b"|") >= 2)
    return sum(1 for i, t in enumerate(stamps) if i == 0 or t - stamps[i - 1] > 0.005)


def consume(args: dict) -> dict:
    records = int(args["records"])
    size = int(args["record_size"])
    # librdkafka stops fetching a partition for fetch.queue.backoff.ms (1 s by default) whenever its
    # local queue holds queued.min.messages; those pauses, not the broker, often set this rate, so
    # they are counted from librdkafka's own fetch log (written to stderr by its threads).
    log = tempfile.TemporaryFile()
    saved_stderr = os.dup(2)
    os.dup2(log.fileno(), 2)
    try:
        got, elapsed = _consume_all(args, records)
    finally:
        os.dup2(saved_stderr, 2)  # an error message must reach the harness, not the log
    log.seek(0)
    return {"records": got, "seconds": elapsed, "records_s": got / elapsed, "mb_s": got * size / elapsed / 1e6,
            "fetch_pauses": _count_pauses(log.read())}


def _consume_all(args: dict, records: int) -> tuple[int, float]:
    consumer = Consumer({"bootstrap.servers": args["bootstrap"], "group.id": f"bench-{os.getpid()}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest", "debug": "fetch",
                         **args.get("consumer_config", {})})
    _assign_all(consumer, args["topic"], int(args["partitions"]))
    got = 0
    t0 = time.monotonic()
    deadline = time.monotonic() + float(args.get("timeout_s", 300))
    while got < records:
        if time.monotonic() > deadline:
            raise SystemExit(f"consume: {got} of {records} records before the timeout")
        batch = consumer.consume(num_messages=10_000, timeout=0.5)
        for msg in batch:
            err = msg.error()
            if err is not None and err.code() != KafkaError._PARTITION_EOF:
                raise SystemExit(f"consume: {err}")
        got += len(batch)
    elapsed = time.monotonic() - t0
    consumer.close()
    return got, elapsed


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def e2e(args: dict) -> dict:
    rate = float(args["rate"])
    seconds = float(args["seconds"])
    warmup = float(args.get("warmup_s", 1.0))
    size = max(int(args["record_size"]), _STAMP.size)
    topic = args["topic"]
    total = int(rate * (seconds + warmup))
    pad = b"p" * (size - _STAMP.size)
    latencies: list[int] = []
    warm_count = int(rate * warmup)
    ready = threading.Event()
    done = threading.Event()

    def read() -> None:
        consumer = Consumer({"bootstrap.servers": args["bootstrap"], "group.id": f"e2e-{os.getpid()}",
                             "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                             **args.get("consumer_config", {})})
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        seen = 0
        while seen < total and not done.is_set():
            msg = consumer.poll(0.1)
            if msg is None or msg.error() is not None:
                continue
            now = time.monotonic_ns()
            if msg.value() == _SYNC:
                ready.set()
                continue
            seen += 1
            if seen > warm_count:
                latencies.append(now - _STAMP.unpack_from(msg.value())[0])
        consumer.close()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    producer = _producer(args, **{"linger.ms": 0})
    # The timed records start once the consumer is known to be fetching: it has seen this one.
    producer.produce(topic, _SYNC)
    producer.flush(30)
    if not ready.wait(60):
        raise SystemExit("e2e: the consumer never received the sync record")
    interval = 1.0 / rate
    next_t = time.monotonic()
    for _ in range(total):
        delay = next_t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        producer.produce(topic, _STAMP.pack(time.monotonic_ns()) + pad)
        producer.poll(0)
        next_t += interval
    producer.flush(60)
    reader.join(timeout=30)
    done.set()
    lat_ms = sorted(x / 1e6 for x in latencies)
    if len(lat_ms) < (total - warm_count) * 0.99:
        raise SystemExit(f"e2e: only {len(lat_ms)} of {total - warm_count} records came back")
    return {"records": len(lat_ms), "p50_ms": _percentile(lat_ms, 0.50), "p99_ms": _percentile(lat_ms, 0.99),
            "p999_ms": _percentile(lat_ms, 0.999), "max_ms": lat_ms[-1] if lat_ms else float("nan"),
            "mean_ms": sum(lat_ms) / len(lat_ms) if lat_ms else float("nan")}


MODES = {"produce": produce, "consume": consume, "e2e": e2e}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in MODES:
        raise SystemExit(f"usage: python -m benchmarks.rdkafka_client {{{','.join(MODES)}}} '<json args>'")
    print(json.dumps(MODES[argv[0]](json.loads(argv[1]))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
