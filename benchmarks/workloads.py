"""The workloads: each runs against one started broker and returns its figures as a flat dict.

- `Throughput`: Kafka's own `kafka-producer-perf-test` / `kafka-consumer-perf-test`
  (`org.apache.kafka.tools.ProducerPerformance` / `ConsumerPerformance`, Java clients), or
  librdkafka through confluent-kafka (`benchmarks.rdkafka_client`), producing then consuming
  one topic; the broker's CPU seconds and peak RSS are read during each phase.  A short
  unmeasured warm-up produce to another topic comes first, so the JVM's JIT is not measured cold.
- `Latency`: end-to-end (produce to consume) latency at a fixed rate well below saturation,
  by our timestamped librdkafka producer/consumer, or by Kafka's `EndToEndLatency` tool
  (one record in flight at a time).
- `Scale`: many partitions created and written once, then many idle client connections held
  open: creation time, RSS held, CPU burnt while idle.

Every external command runs with a timeout.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import kafka_dist
from benchmarks.brokers import BrokerUnderTest, ProcessWatch, Usage, die_with_parent

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOL_TIMEOUT_S = 900
LATENCY_WARMUP_S = 5.0
GB = 1e9


class WorkloadError(RuntimeError):
    """A load generator failed or printed something we cannot read."""


def run_tool(cmd: list[str], timeout: float = TOOL_TIMEOUT_S) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
                              preexec_fn=die_with_parent)
    except subprocess.TimeoutExpired as e:
        raise WorkloadError(f"timed out after {timeout}s: {' '.join(cmd[-12:])}") from e
    if done.returncode != 0:
        raise WorkloadError(f"exit {done.returncode}: {' '.join(cmd[-12:])}\n{done.stdout[-2000:]}\n"
                            f"{done.stderr[-2000:]}")
    return done.stdout


def rdkafka(mode: str, args: dict[str, Any], timeout: float = TOOL_TIMEOUT_S) -> dict[str, Any]:
    out = run_tool([sys.executable, "-m", "benchmarks.rdkafka_client", mode, json.dumps(args)], timeout)
    return json.loads(out.strip().splitlines()[-1])


# -- Kafka's perf tools: output parsing --------------------------------------------------------

_PRODUCER_SUMMARY = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th")


def parse_producer_perf(output: str) -> dict[str, float]:
    """The summary line of ProducerPerformance (the last line matching its format)."""
    matches = _PRODUCER_SUMMARY.findall(output)
    if not matches:
        raise WorkloadError(f"no ProducerPerformance summary in:\n{output[-2000:]}")
    sent, rate, _mib, avg, mx, p50, p95, p99, p999 = matches[-1]
    return {"records": int(sent), "records_s": float(rate), "latency_avg_ms": float(avg),
            "latency_max_ms": float(mx), "latency_p50_ms": float(p50), "latency_p95_ms": float(p95),
            "latency_p99_ms": float(p99), "latency_p999_ms": float(p999)}


def parse_consumer_perf(output: str) -> dict[str, float]:
    """ConsumerPerformance's CSV line: start, end, MB, MB/s, nMsg, nMsg/s, rebalance ms, fetch ms, ..."""
    for line in reversed(output.strip().splitlines()):
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 10 and re.fullmatch(r"\d+", fields[4]):
            return {"records": int(fields[4]), "rebalance_ms": float(fields[6]), "fetch_ms": float(fields[7]),
                    "records_s": float(fields[9])}
    raise WorkloadError(f"no ConsumerPerformance result line in:\n{output[-2000:]}")


_E2E_PERCENTILES = re.compile(r"Percentiles: 50th = ([\d.]+), 99th = ([\d.]+), 99\.9th = ([\d.]+)")
_E2E_AVG = re.compile(r"Avg latency: ([\d.]+) ms")


def parse_end_to_end(output: str) -> dict[str, float]:
    p = _E2E_PERCENTILES.search(output)
    a = _E2E_AVG.search(output)
    if not p or not a:
        raise WorkloadError(f"no EndToEndLatency percentiles in:\n{output[-2000:]}")
    return {"mean_ms": float(a.group(1)), "p50_ms": float(p.group(1)), "p99_ms": float(p.group(2)),
            "p999_ms": float(p.group(3))}


# -- topics -------------------------------------------------------------------------------------

def create_topic(bootstrap: str, name: str, partitions: int, timeout: float = 300.0) -> float:
    """Create a topic and wait until every partition has a leader; seconds taken."""
    from confluent_kafka.admin import AdminClient, NewTopic

    t0 = time.monotonic()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)],
                                  operation_timeout=timeout, request_timeout=timeout)
    futures[name].result(timeout=timeout)
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        meta = admin.list_topics(name, timeout=30).topics.get(name)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions and all(
                p.leader >= 0 and p.error is None for p in meta.partitions.values()):
            return time.monotonic() - t0
        time.sleep(0.05)
    raise WorkloadError(f"topic {name} not ready with {partitions} partitions within {timeout}s")


def produce_records(client: str, bootstrap: str, topic: str, records: int, record_size: int, acks: str,
                    compression: str, lib: Path, transaction_ms: int = 0) -> dict[str, float]:
    """Produce ``records`` as fast as the client goes: Kafka's ProducerPerformance ("java") or the
    rdkafka client; its report (``records_s``, and latencies when the client gives them).  With
    ``transaction_ms`` (java only) the records go in transactions committed every that many ms."""
    if client == "java":
        transactions = (["--transactional-id", f"bench-{topic}", "--transaction-duration-ms", str(transaction_ms)]
                        if transaction_ms else [])
        out = run_tool(kafka_dist.tool_command("org.apache.kafka.tools.ProducerPerformance", [
            "--topic", topic, "--num-records", str(records), "--record-size", str(record_size),
            "--throughput", "-1", *transactions, "--producer-props", f"bootstrap.servers={bootstrap}",
            f"acks={acks}", f"compression.type={compression}"], lib))
        return parse_producer_perf(out)
    return rdkafka("produce", {"bootstrap": bootstrap, "topic": topic, "records": records,
                               "record_size": record_size, "acks": acks, "compression": compression})


def consume_records(client: str, bootstrap: str, topic: str, records: int, record_size: int, partitions: int,
                    consumer_config: dict[str, str], lib: Path) -> dict[str, float]:
    """Consume ``records`` from ``topic``: Kafka's ConsumerPerformance ("java") or the rdkafka
    client, with ``consumer_config`` over the client's defaults; its report (``records``,
    ``records_s``)."""
    if client == "java":
        with tempfile.NamedTemporaryFile("w", suffix=".properties") as config:
            config.write("".join(f"{k}={v}\n" for k, v in consumer_config.items()))
            config.flush()
            out = run_tool(kafka_dist.tool_command("org.apache.kafka.tools.ConsumerPerformance", [
                "--bootstrap-server", bootstrap, "--topic", topic, "--messages", str(records),
                "--timeout", "60000", "--consumer.config", config.name], lib))
        return parse_consumer_perf(out)
    return rdkafka("consume", {"bootstrap": bootstrap, "topic": topic, "records": records,
                               "record_size": record_size, "partitions": partitions,
                               "consumer_config": consumer_config})


def _per_gb(usage: Usage, nbytes: float) -> float:
    return usage.cpu_s / (nbytes / GB) if nbytes else float("nan")


# -- workloads ---------------------------------------------------------------------------------

def size_label(record_size: int) -> str:
    """A record size as workload keys name it: 100B, 1KiB."""
    return f"{record_size // 1024}KiB" if record_size >= 1024 else f"{record_size}B"


@dataclass(frozen=True)
class Throughput:
    client: str          # "java" (Kafka's perf tools) or "librdkafka"
    record_size: int
    partitions: int
    acks: str            # "1" or "all"
    compression: str     # "none" or "lz4"
    records: int
    kind: str = "throughput"
    # consumer settings other than the defaults, as (key, value) pairs
    consumer_config: tuple[tuple[str, str], ...] = ()
    # Java only: produce in transactions committed every this many ms (0: no transactions)
    transaction_ms: int = 0
    # Drop the page cache between produce and consume (needs root): the consumer reads from disk.
    cold_reads: bool = False

    def __post_init__(self) -> None:
        if self.kind != "throughput":
            raise TypeError(f"Throughput(kind={self.kind!r}): pass consumer_config by keyword")
        # results.json stores the pairs as lists
        object.__setattr__(self, "consumer_config", tuple(tuple(kv) for kv in self.consumer_config))

    @property
    def key(self) -> str:
        size = size_label(self.record_size)
        key = f"{self.client} {size} x{self.partitions}p acks={self.acks} {self.compression}"
        if self.transaction_ms:
            key += f" transactions/{self.transaction_ms}ms"
        if self.consumer_config:
            key += ", consumer " + " ".join(f"{k}={v}" for k, v in self.consumer_config)
        if self.cold_reads:
            key += ", read from disk"
        return key

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key}

    def run(self, broker: BrokerUnderTest, lib: Path) -> dict[str, Any]:
        warm = f"warmup-{self.partitions}"
        create_topic(broker.bootstrap, warm, self.partitions)
        rdkafka("produce", {"bootstrap": broker.bootstrap, "topic": warm, "records": max(1000, self.records // 5),
                            "record_size": self.record_size, "acks": self.acks, "compression": self.compression})
        topic = "bench"
        create_topic(broker.bootstrap, topic, self.partitions)
        nbytes = self.records * self.record_size
        result: dict[str, Any] = {}
        with ProcessWatch(broker.pid) as watch:
            produced = produce_records(self.client, broker.bootstrap, topic, self.records, self.record_size,
                                       self.acks, self.compression, lib, self.transaction_ms)
        result.update({
            "produce_records_s": produced["records_s"],
            "produce_mb_s": produced["records_s"] * self.record_size / 1e6,
            "produce_cpu_s_per_gb": _per_gb(watch.usage, nbytes),
            "produce_rss_peak_mb": watch.usage.rss_peak / 1e6,
        })
        if "latency_p99_ms" in produced:
            result["produce_latency_p99_ms"] = produced["latency_p99_ms"]
        if self.cold_reads:
            drop_page_cache()
        with ProcessWatch(broker.pid) as watch:
            consumed = consume_records(self.client, broker.bootstrap, topic, self.records, self.record_size,
                                       self.partitions, dict(self.consumer_config), lib)
        if consumed["records"] < self.records:
            raise WorkloadError(f"consumed {consumed['records']} of {self.records} records")
        result.update({
            "consume_records_s": consumed["records_s"],
            "consume_mb_s": consumed["records_s"] * self.record_size / 1e6,
            "consume_cpu_s_per_gb": _per_gb(watch.usage, nbytes),
            "consume_rss_peak_mb": watch.usage.rss_peak / 1e6,
        })
        if "fetch_pauses" in consumed:
            result["consume_fetch_pauses"] = consumed["fetch_pauses"]
        result["rss_peak_mb"] = max(result["produce_rss_peak_mb"], result["consume_rss_peak_mb"])
        result["cpu_s_per_gb"] = (result["produce_cpu_s_per_gb"] + result["consume_cpu_s_per_gb"]) / 2
        return result


MAX_TOPIC_PARTITIONS = 2000


def drop_page_cache() -> None:
    """Write every dirty page out and drop the page cache, so what is read next comes from disk."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as e:
        raise WorkloadError(f"cannot drop the page cache (root needed): {e}") from None


def measure_latency(client: str, bootstrap: str, topic: str, rate: int, seconds: float, record_size: int,
                    acks: str, lib: Path) -> dict[str, float]:
    """End-to-end latency on partition 0 of an existing ``topic``: p50/p99/p999 (and mean) in ms.
    "java" is Kafka's EndToEndLatency (one record in flight, rate * seconds records); "librdkafka" is our
    fixed-rate timestamped producer with a consumer in the same process."""
    if client == "java":
        out = run_tool(kafka_dist.tool_command("org.apache.kafka.tools.EndToEndLatency", [
            bootstrap, topic, str(max(10, int(rate * seconds))), acks, str(record_size)], lib))
        return parse_end_to_end(out)
    return rdkafka("e2e", {"bootstrap": bootstrap, "topic": topic, "rate": rate, "seconds": seconds,
                           "record_size": record_size, "acks": acks})


@dataclass(frozen=True)
class Latency:
    client: str          # "librdkafka" (fixed rate, timestamped) or "java" (EndToEndLatency, one in flight)
    record_size: int
    rate: int            # records per second (librdkafka); number of records (java)
    seconds: float
    acks: str = "1"
    kind: str = "latency"
    # the unmeasured warm-up on another topic first: seconds (librdkafka), or rate * warmup_s records (java)
    warmup_s: float = LATENCY_WARMUP_S

    @property
    def key(self) -> str:
        size = size_label(self.record_size)
        if self.client == "java":
            return f"e2e EndToEndLatency {size} acks={self.acks} {int(self.rate * self.seconds)} records"
        return f"e2e librdkafka {size} acks={self.acks} @{self.rate}/s"

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key}

    def _measure(self, broker: BrokerUnderTest, lib: Path, topic: str, seconds: float) -> dict[str, float]:
        create_topic(broker.bootstrap, topic, 1)
        return measure_latency(self.client, broker.bootstrap, topic, self.rate, seconds, self.record_size,
                               self.acks, lib)

    def run(self, broker: BrokerUnderTest, lib: Path) -> dict[str, Any]:
        # A fresh JVM answers its first seconds of requests hundreds of milliseconds late (JIT):
        # an unmeasured warm-up on another topic comes first, for both brokers.
        self._measure(broker, lib, "latency-warmup", self.warmup_s)
        with ProcessWatch(broker.pid) as watch:
            lat = self._measure(broker, lib, "latency", self.seconds)
        return {"p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"], "p999_ms": lat["p999_ms"],
                "rss_peak_mb": watch.usage.rss_peak / 1e6,
                "cpu_s_per_s": watch.usage.cpu_s / watch.usage.wall_s if watch.usage.wall_s else float("nan")}


_API_VERSIONS_V0 = struct.pack(">hhih", 18, 0, 1, 4) + b"idle"


def open_idle_connections(bootstrap: str, count: int) -> list[socket.socket]:
    """``count`` connections that each made one ApiVersions request and then say nothing."""
    host, port = bootstrap.rsplit(":", 1)
    socks = []
    frame = struct.pack(">i", len(_API_VERSIONS_V0)) + _API_VERSIONS_V0
    for _ in range(count):
        s = socket.create_connection((host, int(port)), timeout=30)
        s.sendall(frame)
        socks.append(s)
    for s in socks:
        size = struct.unpack(">i", _recv_exactly(s, 4))[0]
        _recv_exactly(s, size)
    return socks


def _recv_exactly(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise WorkloadError("broker closed an idle connection")
        buf += chunk
    return bytes(buf)


@dataclass(frozen=True)
class Scale:
    partitions: int
    connections: int
    idle_s: float
    kind: str = "scale"

    @property
    def key(self) -> str:
        return f"{self.partitions} partitions + {self.connections} idle connections"

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key}

    def run(self, broker: BrokerUnderTest, lib: Path) -> dict[str, Any]:
        import resource

        from confluent_kafka import Producer

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < self.connections + 256:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, self.connections + 1024), hard))
        rss_before = ProcessWatch(broker.pid)
        with rss_before:
            pass
        # Kafka's KRaft controller refuses one operation of more than 10,000 records
        # (POLICY_VIOLATION, "excessively large batch operation"): more partitions than a topic of
        # MAX_TOPIC_PARTITIONS are created as several topics, one after another, on both brokers.
        topics = [(f"many-{i}" if i else "many", min(MAX_TOPIC_PARTITIONS, self.partitions - i * MAX_TOPIC_PARTITIONS))
                  for i in range(-(-self.partitions // MAX_TOPIC_PARTITIONS))]
        create_s = sum(create_topic(broker.bootstrap, name, count) for name, count in topics)
        t0 = time.monotonic()
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
        for name, count in topics:
            for p in range(count):
                producer.produce(name, b"one record per partition", partition=p)
        if producer.flush(120):
            raise WorkloadError("records to every partition not acknowledged within 120s")
        write_s = time.monotonic() - t0
        # A consumer reads every partition's record (Kafka's Java consumer: with fetch sessions on
        # both brokers); the tool's fetch time, from the group's assignment to the last record.
        read = parse_consumer_perf(run_tool(kafka_dist.tool_command("org.apache.kafka.tools.ConsumerPerformance", [
            "--bootstrap-server", broker.bootstrap, "--include", "many.*", "--group", "scale-reader",
            "--messages", str(self.partitions), "--timeout", "120000"], lib)))
        t0 = time.monotonic()
        socks = open_idle_connections(broker.bootstrap, self.connections)
        connect_s = time.monotonic() - t0
        try:
            with ProcessWatch(broker.pid, interval=0.2) as idle:
                time.sleep(self.idle_s)
        finally:
            for s in socks:
                s.close()
        return {"create_partitions_s": create_s, "write_every_partition_s": write_s,
                "read_every_partition_s": read["fetch_ms"] / 1000, "connect_s": connect_s,
                "rss_idle_mb": idle.usage.rss_end / 1e6, "rss_before_mb": rss_before.usage.rss_end / 1e6,
                "idle_cpu_s_per_s": idle.usage.cpu_s / idle.usage.wall_s}


WORKLOAD_KINDS = {"throughput": Throughput, "latency": Latency, "scale": Scale}


def from_description(d: dict[str, Any]) -> Throughput | Latency | Scale:
    fields = {k: v for k, v in d.items() if k not in ("key",)}
    return WORKLOAD_KINDS[fields["kind"]](**fields)
