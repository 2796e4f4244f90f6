"""Three brokers of each: pykafkad (ZooKeeper-coordinated) against Apache Kafka (KRaft), same machine, same run.

    python -m benchmarks.cluster [--records N] [--small-records M] [--rounds R] [--brokers pykafkad,kafka]
                                 [--out DIR] [--results-md PATH | --no-results-md]

pykafkad: a standalone ZooKeeper (cluster_tests.zookeeper_server, jars from `make zookeeper-deps`) and
three `python -m pykafkad serve configs/server.properties` processes with `zookeeper.connect` on a
chroot of their own.  Kafka 4.4.0: three `kafka.Kafka` processes, each `process.roles=broker,controller`
with `controller.quorum.voters` listing all three, each log directory formatted with the same cluster
id (the formatting is timed but not counted in the start-up).  Both get `offsets.topic.replication.factor=3`
and `group.initial.rebalance.delay.ms=0`, and otherwise the same settings as the single-broker harness.

Each round starts pykafkad's cluster, runs every workload on it, stops it, then does the same with
Kafka's (fresh data directories every time; only one cluster runs at a time).  Every workload creates
a topic of replication factor 3 with `min.insync.replicas=2`.  The throughput workloads produce their
records, then consume them all; the latency workloads send records at a fixed rate (librdkafka) or one
at a time (Kafka's EndToEndLatency) and time each from send to receipt.  The brokers' CPU and resident
memory are read from /proc while each runs.

Start-up is measured from the exec of the first process (ZooKeeper's, for pykafkad) to the first
acks=all record acknowledged on a new replication-factor-3 topic, once metadata lists three brokers.

Raw figures go to DIR/results.json (default .cache/bench/cluster/) after every run; at the end the
"Three-broker cluster" section of benchmarks/RESULTS.md (between its markers) is rewritten.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import kafka_dist, machine_speed, report
from benchmarks.brokers import (
    _LIVE,
    COMMON_OVERRIDES,
    STOP_TIMEOUT_S,
    BrokerStartError,
    BrokerUnderTest,
    ProcessWatch,
    die_with_parent,
    free_port,
    install_cleanup,
    rss_bytes,
    wait_listening,
)
from benchmarks.workloads import (
    LATENCY_WARMUP_S,
    WorkloadError,
    consume_records,
    measure_latency,
    produce_records,
    rdkafka,
    size_label,
)
from cluster_tests.zookeeper_server import ZooKeeperServer

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
OUT_DIR = REPO_ROOT / ".cache" / "bench" / "cluster"
RESULTS_MD = BENCH_DIR / "RESULTS.md"
NOTES = BENCH_DIR / "CLUSTER_NOTES.md"
BEGIN, END = report.CLUSTER_BEGIN, report.CLUSTER_END
START_TIMEOUT_S = 180.0
TOPIC_TIMEOUT_S = 120.0
NODES = (1, 2, 3)
REPLICATION_FACTOR = 3
MIN_INSYNC = "2"
CHROOT = "/bench"
# Both clusters: three copies of the group offsets, and no 3 s wait for a first group join.
CLUSTER_OVERRIDES = {**COMMON_OVERRIDES, "offsets.topic.replication.factor": "3"}
GB = 1e9
IDLE_S = 3.0  # after start-up: the three brokers' CPU while nothing is asked of them


# -- processes ------------------------------------------------------------------------------------

class Node(BrokerUnderTest):
    """One broker process of a cluster; registered with the harness's exit cleanup like any broker."""

    def __init__(self, work_dir: Path, name: str, port: int, data_dir: Path, cwd: Path) -> None:
        self.name = name
        super().__init__(work_dir)
        self.port = port
        self._data_dir = data_dir
        self._cwd = cwd
        self.cmd: list[str] = []

    @property
    def data_dir(self) -> Path:
        return self._data_dir

    def cwd(self) -> Path:
        return self._cwd

    def launch(self) -> None:
        with open(self.log_path, "ab") as out:
            out.write(f"\n===== {' '.join(self.cmd)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(self.cmd, cwd=self.cwd(), stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=out, preexec_fn=die_with_parent)
        _LIVE.append(self)


class BenchZooKeeper(ZooKeeperServer):
    """cluster_tests' ZooKeeper, started so that it dies with the harness, and stopped at its exit."""

    preexec_fn = staticmethod(die_with_parent)

    def start(self) -> BenchZooKeeper:
        _LIVE.append(self)  # type: ignore[arg-type] - stop_all only calls stop() and proc.kill()
        try:
            super().start()
        except AssertionError as e:  # cluster_tests' failure, as the harness reports a start that failed
            raise BrokerStartError(str(e)) from None
        return self

    def stop(self) -> None:
        if self in _LIVE:
            _LIVE.remove(self)  # type: ignore[arg-type]
        super().stop()


class Cluster:
    """Three brokers (and whatever else the cluster needs); `start()` returns its start-up figures."""

    name = "cluster"

    def __init__(self, work: Path) -> None:
        self.work = work / self.name
        self.nodes: list[Node] = []

    @property
    def bootstrap(self) -> str:
        return ",".join(n.bootstrap for n in self.nodes)

    def broker_pids(self) -> list[int]:
        return [n.pid for n in self.nodes]

    def other_pids(self) -> dict[str, int]:
        return {}

    def _fresh(self) -> None:
        if self.work.exists():
            shutil.rmtree(self.work)
            # Written out now, ext4 without a journal skips the freed inodes for 60 s rather than
            # 360 s (brokers.set_aside): long before this round's creation workload, which runs last.
            os.sync()
        self.work.mkdir(parents=True)
        self.nodes = []

    def start(self) -> dict[str, float]:
        raise NotImplementedError

    def stop(self) -> dict[str, int | None]:
        """One SIGTERM to every broker at once (a second one would make pykafkad skip its controlled
        shutdown), SIGKILL for any still running after STOP_TIMEOUT_S; each broker's exit code."""
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.proc.terminate()
        codes: dict[str, int | None] = {}
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for node in self.nodes:
            if node in _LIVE:
                _LIVE.remove(node)
            if node.proc is None:
                continue
            try:
                codes[node.name] = node.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                node.proc.kill()
                node.proc.wait(timeout=10)
                codes[node.name] = None  # killed
        return codes

    def logs(self) -> list[Path]:
        return [n.log_path for n in self.nodes]


class PykafkadCluster(Cluster):
    name = "pykafkad"

    def __init__(self, work: Path, root: Path = REPO_ROOT) -> None:
        super().__init__(work)
        self.root = root
        self.zookeeper: BenchZooKeeper | None = None

    def other_pids(self) -> dict[str, int]:
        if self.zookeeper is None or self.zookeeper.proc is None:
            return {}
        return {"zookeeper": self.zookeeper.proc.pid}

    def start(self) -> dict[str, float]:
        self._fresh()
        t0 = time.monotonic()
        self.zookeeper = BenchZooKeeper(self.work / "zookeeper" / "data").start()
        zk_s = time.monotonic() - t0
        t1 = time.monotonic()
        for i in NODES:
            node = Node(self.work, f"pykafkad-{i}", free_port(), self.work / f"broker-{i}" / "logs", self.root)
            settings = {
                "zookeeper.connect": self.zookeeper.connect + CHROOT,
                "broker.id": str(i), "node.id": str(i),
                "listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
                "log.dirs": str(node.data_dir),
                **CLUSTER_OVERRIDES,
            }
            node.cmd = [sys.executable, "-m", "pykafkad", "serve", str(self.root / "configs" / "server.properties")]
            for key, value in settings.items():
                node.cmd += ["--override", f"{key}={value}"]
            self.nodes.append(node)
        for node in self.nodes:
            node.launch()
        wait_ready(self, t0)
        done = time.monotonic()
        return {"start_s": done - t0, "brokers_start_s": done - t1, "zookeeper_start_s": zk_s}

    def stop(self) -> dict[str, int | None]:
        codes = super().stop()
        if self.zookeeper is not None:
            self.zookeeper.stop()
        return codes

    def logs(self) -> list[Path]:
        return super().logs() + ([self.zookeeper.log_path] if self.zookeeper else [])


class KafkaCluster(Cluster):
    name = "kafka"

    def __init__(self, work: Path, lib: Path) -> None:
        super().__init__(work)
        self.lib = lib

    def start(self) -> dict[str, float]:
        self._fresh()
        ports = {i: (free_port(), free_port()) for i in NODES}
        voters = ",".join(f"{i}@127.0.0.1:{ports[i][1]}" for i in NODES)
        configs = []
        for i in NODES:
            node = Node(self.work, f"kafka-{i}", ports[i][0], self.work / f"broker-{i}" / "logs", REPO_ROOT)
            config = self.work / f"kafka-{i}.properties"
            config.write_text(kafka_dist.server_properties(
                ports[i][0], ports[i][1], node.data_dir,
                {"node.id": str(i), "controller.quorum.voters": voters, **CLUSTER_OVERRIDES}))
            node.cmd = kafka_dist.broker_command(config, self.lib)
            configs.append(config)
            self.nodes.append(node)
        t0 = time.monotonic()
        formats = [subprocess.Popen(kafka_dist.format_command(c, self.lib), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, preexec_fn=die_with_parent) for c in configs]
        for p in formats:
            _, err = p.communicate(timeout=180)
            if p.returncode:
                raise BrokerStartError(f"kafka-storage format failed: {err.decode(errors='replace')[-2000:]}")
        format_s = time.monotonic() - t0
        t0 = time.monotonic()
        for node in self.nodes:
            node.launch()
        wait_ready(self, t0)
        done = time.monotonic()
        return {"start_s": done - t0, "brokers_start_s": done - t0, "format_s": format_s}


# -- readiness and topics --------------------------------------------------------------------------

def _check_alive(cluster: Cluster) -> None:
    for node in cluster.nodes:
        if node.proc is None or node.proc.poll() is not None:
            raise BrokerStartError(f"{node.name} exited (code {node.proc.returncode if node.proc else None}); "
                                   f"see {node.log_path}")


def wait_ready(cluster: Cluster, t0: float) -> None:
    """Every broker listens, metadata lists all three, and an acks=all record on a new RF 3 topic is acked."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    deadline = t0 + START_TIMEOUT_S
    for node in cluster.nodes:
        wait_listening(node.name, node.port, deadline, lambda: _check_alive(cluster))
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    while True:
        _check_alive(cluster)
        with contextlib.suppress(Exception):
            if len(admin.list_topics(timeout=2).brokers) == len(NODES):
                break
        if time.monotonic() > deadline:
            raise BrokerStartError(f"{cluster.name}: metadata never listed {len(NODES)} brokers")
        time.sleep(0.02)
    create_topic(cluster, "startup-probe", 1, deadline - time.monotonic())
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0,
                         "retry.backoff.ms": 20, "retry.backoff.max.ms": 100,
                         "topic.metadata.refresh.fast.interval.ms": 20,
                         "message.timeout.ms": max(1000, int((deadline - time.monotonic()) * 1000))})
    delivered: list[object] = []
    producer.produce("startup-probe", b"first", on_delivery=lambda err, msg: delivered.append(err))
    while not delivered:
        _check_alive(cluster)
        if time.monotonic() > deadline:
            raise BrokerStartError(f"{cluster.name}: no acks=all produce acknowledged within {START_TIMEOUT_S}s")
        producer.poll(0.005)
    if delivered[0] is not None:
        raise BrokerStartError(f"{cluster.name}: first produce failed: {delivered[0]}")


def create_topic(cluster: Cluster, name: str, partitions: int, timeout: float = TOPIC_TIMEOUT_S) -> float:
    """Create an RF 3, min.insync.replicas=2 topic and wait until every partition has a leader and all three
    replicas in sync; seconds taken.  A create the cluster refuses as not ready yet is retried."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    t0 = time.monotonic()
    deadline = t0 + timeout
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    while True:
        new = NewTopic(name, num_partitions=partitions, replication_factor=REPLICATION_FACTOR,
                       config={"min.insync.replicas": MIN_INSYNC})
        try:
            admin.create_topics([new], operation_timeout=60, request_timeout=60)[name].result(timeout=90)
            break
        except KafkaException as e:
            err = e.args[0]
            if err.name() == "TOPIC_ALREADY_EXISTS":
                break
            if not err.retriable() and err.name() not in ("INVALID_REPLICATION_FACTOR", "NOT_CONTROLLER"):
                raise WorkloadError(f"create {name} on {cluster.name}: {err}") from e
            if time.monotonic() > deadline:
                raise WorkloadError(f"create {name} on {cluster.name}: still {err} after {timeout:.0f}s") from e
            time.sleep(0.1)
    while time.monotonic() < deadline:
        meta = None
        with contextlib.suppress(Exception):
            meta = admin.list_topics(name, timeout=10).topics.get(name)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions and all(
                p.leader >= 0 and p.error is None and len(p.isrs) == REPLICATION_FACTOR
                for p in meta.partitions.values()):
            return time.monotonic() - t0
        time.sleep(0.05)
    raise WorkloadError(f"topic {name} on {cluster.name}: not every partition led with a full ISR within "
                        f"{timeout:.0f}s")


# -- watching several processes --------------------------------------------------------------------

@contextlib.contextmanager
def watch(pids: dict[str, int]):  # noqa: ANN201 - a generator context manager
    """ProcessWatch on every pid at once; yields {name: Usage}."""
    with contextlib.ExitStack() as stack:
        watches = {name: stack.enter_context(ProcessWatch(pid)) for name, pid in pids.items()}
        usages = {name: w.usage for name, w in watches.items()}
        yield usages


def _pids(cluster: Cluster) -> dict[str, int]:
    return {**{n.name: n.pid for n in cluster.nodes}, **cluster.other_pids()}


def _broker_sums(cluster: Cluster, phases: list[dict[str, Any]]) -> tuple[float, float, float]:
    """(sum over brokers of each one's peak RSS over the phases, summed CPU s, ZooKeeper's peak RSS) in MB/s."""
    rss = sum(max(p[n.name].rss_peak for p in phases) for n in cluster.nodes) / 1e6
    cpu = sum(p[n.name].cpu_s for p in phases for n in cluster.nodes)
    zk = max((p["zookeeper"].rss_peak for p in phases if "zookeeper" in p), default=0) / 1e6
    return rss, cpu, zk


# -- workloads ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClusterThroughput:
    client: str          # "java" (kafka-producer-perf-test / kafka-consumer-perf-test) or "librdkafka"
    record_size: int
    acks: str
    records: int
    partitions: int = 3
    kind: str = "throughput"

    @property
    def key(self) -> str:
        size = size_label(self.record_size)
        return f"{self.client} {size} x{self.partitions}p RF3 acks={self.acks}"

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key}

    def run(self, cluster: Cluster, lib: Path) -> dict[str, Any]:
        warm = f"warmup-{self.client}-{self.record_size}-{self.acks}"
        create_topic(cluster, warm, self.partitions)
        rdkafka("produce", {"bootstrap": cluster.bootstrap, "topic": warm, "records": max(1000, self.records // 5),
                            "record_size": self.record_size, "acks": self.acks, "compression": "none"})
        topic = f"bench-{self.client}-{self.record_size}-{self.acks}"
        create_s = create_topic(cluster, topic, self.partitions)
        nbytes = self.records * self.record_size
        with watch(_pids(cluster)) as produce_usage:
            produced = produce_records(self.client, cluster.bootstrap, topic, self.records, self.record_size,
                                       self.acks, "none", lib)
        with watch(_pids(cluster)) as consume_usage:
            consumed = consume_records(self.client, cluster.bootstrap, topic, self.records, self.record_size,
                                       self.partitions, {"fetch.queue.backoff.ms": "10"}, lib)
        if consumed["records"] < self.records:
            raise WorkloadError(f"consumed {consumed['records']} of {self.records} records")
        rss, _, zk_rss = _broker_sums(cluster, [produce_usage, consume_usage])
        _, produce_cpu, _ = _broker_sums(cluster, [produce_usage])
        _, consume_cpu, _ = _broker_sums(cluster, [consume_usage])
        result = {
            "produce_mb_s": produced["records_s"] * self.record_size / 1e6,
            "consume_mb_s": consumed["records_s"] * self.record_size / 1e6,
            "brokers_rss_peak_mb": rss,
            "create_topic_s": create_s,
            "produce_cpu_s_per_gb": produce_cpu / (nbytes / GB),
            "consume_cpu_s_per_gb": consume_cpu / (nbytes / GB),
        }
        if "latency_p99_ms" in produced:
            result["produce_latency_p99_ms"] = produced["latency_p99_ms"]
        if zk_rss:
            result["zookeeper_rss_peak_mb"] = zk_rss
        return result


@dataclass(frozen=True)
class ClusterLatency:
    client: str          # "librdkafka" (fixed rate, timestamped) or "java" (EndToEndLatency, one in flight)
    record_size: int
    rate: int            # records per second; the Java tool sends rate * seconds records one at a time
    seconds: float
    acks: str = "all"
    kind: str = "latency"

    @property
    def key(self) -> str:
        size = size_label(self.record_size)
        if self.client == "java":
            return f"e2e EndToEndLatency {size} RF3 acks={self.acks} {int(self.rate * self.seconds)} records"
        return f"e2e librdkafka {size} RF3 acks={self.acks} @{self.rate}/s"

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key}

    def run(self, cluster: Cluster, lib: Path) -> dict[str, Any]:
        # As on one broker: an unmeasured warm-up on another topic first, so no JVM is measured cold.
        warm = f"latency-warmup-{self.client}-{self.record_size}-{self.acks}"
        create_topic(cluster, warm, 1)
        measure_latency(self.client, cluster.bootstrap, warm, self.rate, LATENCY_WARMUP_S, self.record_size,
                        self.acks, lib)
        topic = f"latency-{self.client}-{self.record_size}-{self.acks}"
        create_topic(cluster, topic, 1)
        with watch(_pids(cluster)) as usage:
            lat = measure_latency(self.client, cluster.bootstrap, topic, self.rate, self.seconds,
                                  self.record_size, self.acks, lib)
        rss, cpu, _ = _broker_sums(cluster, [usage])
        wall = usage[cluster.nodes[0].name].wall_s
        return {"p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"], "p999_ms": lat["p999_ms"],
                "brokers_rss_peak_mb": rss, "brokers_cpu_s_per_s": cpu / wall if wall else float("nan")}


@dataclass(frozen=True)
class ClusterCreation:
    partitions: int
    kind: str = "creation"

    @property
    def key(self) -> str:
        return f"create {self.partitions} partitions RF3"

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "key": self.key}

    def run(self, cluster: Cluster, lib: Path) -> dict[str, Any]:
        # Issue 32's "on three brokers": one CreateTopics until the metadata shows every partition led
        # with its three replicas in sync.  Neither cluster's brokers have made their logs by then:
        # Kafka's apply the controller's records after it answers, pykafkad's make them once they see
        # the topic (benchmarks/NOTES.md has how long that takes here).
        create_topic(cluster, "creation-warmup", 1)
        return {"create_topic_s": create_topic(cluster, f"created-{self.partitions}", self.partitions)}


Workload = ClusterThroughput | ClusterLatency | ClusterCreation


def workloads(records: int, small_records: int, latency_s: float, creation_partitions: int = 0
              ) -> list[Workload]:
    out: list[Workload] = []
    if records:
        out += [ClusterThroughput("java", 1024, "all", records), ClusterThroughput("librdkafka", 1024, "all", records)]
    if small_records:
        out.append(ClusterThroughput("librdkafka", 100, "1", small_records))
    if latency_s:
        # Rates both clusters sustain on one partition: with linger.ms=0 each record is a produce request
        # of its own, and both answer one connection's requests in order, each after its replication.
        out += [ClusterLatency("librdkafka", 1024, 100, latency_s),
                ClusterLatency("librdkafka", 1024, 1000, latency_s, acks="1"),
                ClusterLatency("java", 1024, 200, latency_s)]
    if creation_partitions:
        # Last: the 2,000 partitions stay, and every follower fetch after it walks them (on both
        # clusters), which the latency workloads would measure instead of a record's path
        # (benchmarks/NOTES.md, "2,000 idle partitions on three brokers").
        out.append(ClusterCreation(creation_partitions))
    return out


# -- the run -----------------------------------------------------------------------------------------

def zookeeper_version() -> str:
    from cluster_tests.zookeeper_server import ZOOKEEPER_LIB

    for jar in ZOOKEEPER_LIB.glob("zookeeper-3*.jar"):
        return jar.name.removeprefix("zookeeper-").removesuffix(".jar")
    return "unknown"


def dirty(root: Path = REPO_ROOT) -> str:
    """What `git status` says is uncommitted in the broker's own code (the run uses the working tree)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "pykafkad", "rust_log", "wire", "configs"],
                             cwd=root, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    files = [line[3:] for line in out.splitlines() if line.strip()]
    return f" + uncommitted changes to {', '.join(files)}" if files else ""


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.__main__ import loadavg, machine, versions

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = kafka_dist.ensure_jars()
    work = out_dir / "run"
    clusters: dict[str, Cluster] = {"pykafkad": PykafkadCluster(work), "kafka": KafkaCluster(work, lib)}
    order = [b for b in ("pykafkad", "kafka") if b in args.brokers.split(",")]
    wls = workloads(args.records, args.small_records, args.latency_seconds, args.creation_partitions)
    results: dict[str, Any] = {
        "meta": {"command": args.command_line, "rounds": args.rounds,
                 "started": datetime.datetime.now().isoformat(timespec="seconds"), "machine": machine(),
                 "versions": {**versions(lib, REPO_ROOT), "zookeeper": zookeeper_version()}, "loadavg": [],
                 "machine_speed": []},
                 "pykafkad_tree": dirty(),
        "workloads": [w.describe() for w in wls],
        "runs": [],
    }
    results_path = out_dir / "results.json"
    for rnd in range(args.rounds):
        for name in order:
            cluster = clusters[name]
            results["meta"]["machine_speed"].append(machine_speed.sample())
            results["meta"]["loadavg"].append(loadavg())
            record: dict[str, Any] = {"broker": name, "round": rnd, "workloads": {}}
            print(f"[{time.strftime('%H:%M:%S')}] {name} cluster, round {rnd + 1}/{args.rounds}", flush=True)
            try:
                record["startup"] = cluster.start()
                idle = {n: rss_bytes(pid) for n, pid in _pids(cluster).items()}
                record["startup"]["brokers_rss_mb"] = sum(idle[n.name] for n in cluster.nodes) / 1e6
                with watch(_pids(cluster)) as idle_usage:
                    time.sleep(IDLE_S)
                record["startup"]["brokers_idle_cpu_s_per_s"] = _broker_sums(cluster, [idle_usage])[1] / IDLE_S
                print("    start-up " + ", ".join(f"{k}={v:.3g}" for k, v in record["startup"].items()), flush=True)
                for wl in wls:
                    t0 = time.monotonic()
                    try:
                        metrics = wl.run(cluster, lib)
                        record["workloads"][wl.key] = {"metrics": metrics, "wall_s": time.monotonic() - t0}
                        print(f"    {wl.key}: " + ", ".join(f"{k}={v:.4g}" for k, v in metrics.items()), flush=True)
                    except Exception as e:  # noqa: BLE001 - one failed workload is reported, the rest go on
                        record["workloads"][wl.key] = {"error": f"{type(e).__name__}: {e}"}
                        print(f"    {wl.key} FAILED: {str(e)[:2000]}", flush=True)
                        if args.verbose:
                            traceback.print_exc()
            except Exception as e:  # noqa: BLE001 - a cluster that does not start is reported too
                record["error"] = f"{type(e).__name__}: {e}"
                print(f"    FAILED: {record['error'][:2000]}", flush=True)
                if args.verbose:
                    traceback.print_exc()
            finally:
                t0 = time.monotonic()
                record["exit_codes"] = cluster.stop()
                record["stop_s"] = time.monotonic() - t0
                record["logs"] = [str(p) for p in cluster.logs()]
            results["meta"]["loadavg"].append(loadavg())
            results["runs"].append(record)
            results_path.write_text(json.dumps(results, indent=1))
    results["meta"]["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    results_path.write_text(json.dumps(results, indent=1))
    print(f"wrote {results_path}", flush=True)
    return results


# -- the report ------------------------------------------------------------------------------------

METRICS = {
    "produce_mb_s": ("produce MB/s", "higher"),
    "consume_mb_s": ("consume MB/s", "higher"),
    "brokers_rss_peak_mb": ("peak RSS of the three brokers, summed, MB", "lower"),
    "zookeeper_rss_peak_mb": ("ZooKeeper peak RSS (not in the sum), MB", "lower"),
    "create_topic_s": ("create the RF 3 topic until every ISR is full, s", "lower"),
    "produce_latency_p99_ms": ("producer-reported p99 latency ms (saturated)", "lower"),
    "produce_cpu_s_per_gb": ("brokers' CPU s per GB produced (three summed)", "lower"),
    "consume_cpu_s_per_gb": ("brokers' CPU s per GB consumed (three summed)", "lower"),
}
LATENCY_METRICS = {
    "p50_ms": ("end-to-end p50 ms", "lower"),
    "p99_ms": ("end-to-end p99 ms", "lower"),
    "p999_ms": ("end-to-end p99.9 ms", "lower"),
    "brokers_rss_peak_mb": ("peak RSS of the three brokers, summed, MB", "lower"),
    "brokers_cpu_s_per_s": ("the three brokers' CPU s per second, summed", "lower"),
}
STARTUP_METRICS = {
    "start_s": ("cluster start-up, s (first exec to first acks=all record on an RF 3 topic)", "lower"),
    "brokers_start_s": ("brokers only, s (from the brokers' exec)", "lower"),
    "zookeeper_start_s": ("ZooKeeper until it answers `ruok`, s (pykafkad only)", "lower"),
    "format_s": ("`kafka-storage format` of the three log dirs, in parallel, s (Kafka only, not counted)", "lower"),
    "brokers_rss_mb": ("RSS of the three brokers when ready, summed, MB", "lower"),
    "stop_s": ("stop: SIGTERM to the three at once until all have exited, s", "lower"),
    "brokers_idle_cpu_s_per_s": (f"the three brokers' CPU s per second, idle for {IDLE_S:g} s after start-up",
                                 "lower"),
}


def _runs_for(results: dict[str, Any], key: str | None) -> list[dict[str, Any]]:
    """In report.py's shape ({"broker", "metrics"}): one workload's runs, or the start-ups (key None)."""
    out = []
    for r in results["runs"]:
        if key is None:
            if "startup" in r:
                out.append({"broker": r["broker"], "metrics": {**r["startup"], "stop_s": r.get("stop_s")}})
        else:
            w = r.get("workloads", {}).get(key)
            if w and "metrics" in w:
                out.append({"broker": r["broker"], "metrics": w["metrics"]})
    return out


def _ratio(runs: list[dict[str, Any]], metric: str) -> float | None:
    py, kf = report._mean(report._values(runs, "pykafkad", metric)), report._mean(report._values(runs, "kafka", metric))
    return py / kf if py is not None and kf else None


def _table(runs: list[dict[str, Any]], metrics: dict[str, tuple[str, str]]) -> list[str]:
    lines = ["| metric | pykafkad runs | pykafkad mean | Kafka runs | Kafka mean | ratio pykafkad/Kafka |",
             "|---|---:|---:|---:|---:|---:|"]
    for metric, (label, _better) in metrics.items():
        py, kf = report._values(runs, "pykafkad", metric), report._values(runs, "kafka", metric)
        if py or kf:
            mp, mk = report._mean(py), report._mean(kf)
            ratio = mp / mk if mp is not None and mk else None
            cells = [label, " / ".join(report._fmt(x) for x in py) or "–", report._fmt(mp),
                     " / ".join(report._fmt(x) for x in kf) or "–", report._fmt(mk), report._ratio(ratio)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _summary(results: dict[str, Any]) -> list[str]:
    lines = []
    for d in results["workloads"]:
        runs = _runs_for(results, d["key"])
        parts = []
        if d.get("kind") == "latency":
            for metric, what in (("p99_ms", "p99 end-to-end latency"), ("p50_ms", "p50")):
                r = _ratio(runs, metric)
                if r is not None:
                    verdict = ("pykafkad ahead" if r < 1 else "**pykafkad behind**") if abs(r - 1) > 0.05 else "level"
                    parts.append(f"{what} {r:.2f} ({verdict})")
            if parts:
                lines.append(f"- {d['key']}: " + "; ".join(parts) + ".")
            continue
        for metric in ("produce_mb_s", "consume_mb_s", "brokers_rss_peak_mb", "create_topic_s"):
            r = _ratio(runs, metric)
            if r is None:
                continue
            label, better = METRICS[metric]
            good = r >= 1 if better == "higher" else r <= 1
            what = {"produce_mb_s": "produce", "consume_mb_s": "consume", "brokers_rss_peak_mb": "broker memory",
                    "create_topic_s": "topic creation"}[metric]
            verdict = ("pykafkad ahead" if good else "**pykafkad behind**") if abs(r - 1) > 0.05 else "level"
            parts.append(f"{what} {r:.2f} ({verdict})")
        py = report._mean(report._values(runs, "pykafkad", "brokers_rss_peak_mb"))
        zk = report._mean(report._values(runs, "pykafkad", "zookeeper_rss_peak_mb"))
        kf = report._mean(report._values(runs, "kafka", "brokers_rss_peak_mb"))
        if py is not None and zk is not None and kf:
            parts.append(f"memory with ZooKeeper's added to pykafkad's brokers {(py + zk) / kf:.2f}")
        if parts:
            lines.append(f"- {d['key']}: " + "; ".join(parts) + ".")
    runs = _runs_for(results, None)
    r = _ratio(runs, "start_s")
    if r is not None:
        rb = _ratio(runs, "brokers_start_s")
        lines.append(f"- Cluster start-up {r:.2f} with ZooKeeper's start counted for pykafkad"
                     + (f", {rb:.2f} counting the brokers alone" if rb is not None else "")
                     + f" ({'pykafkad ahead' if r < 1 else '**pykafkad behind**'}).")
    r = _ratio(runs, "stop_s")
    if r is not None:
        lines.append(f"- Stopping all three at once {r:.2f} ({'pykafkad ahead' if r < 1 else '**pykafkad behind**'}).")
    return lines


def _failures(results: dict[str, Any], key: str) -> list[str]:
    out = []
    for r in results["runs"]:
        w = r.get("workloads", {}).get(key)
        if w and "error" in w:
            out += [f"- {r['broker']} round {r['round'] + 1} failed: `{w['error'][:300]}`", ""]
    return out


def render_section(results: dict[str, Any]) -> str:
    meta = results["meta"]
    v = meta["versions"]
    ones = [x["1m"] for x in meta["loadavg"]]
    out = [BEGIN, "## Three-broker cluster", "",
           "pykafkad in cluster mode (three brokers coordinated by one ZooKeeper) against Apache Kafka as a "
           "three-node KRaft cluster (three processes, each `process.roles=broker,controller`, "
           "`controller.quorum.voters` listing all three), on this one machine, in the same run; every ratio is "
           "pykafkad / Kafka of the means of the rounds. Each round starts pykafkad's cluster, runs every "
           "workload on it and stops it, then does the same with Kafka's: fresh data directories every time, "
           "only one cluster running at a time. Every workload creates a topic of replication factor 3 with "
           "`min.insync.replicas=2`. A throughput workload (3 partitions) produces its records (after an "
           "unmeasured warm-up produce of a fifth as many to another such topic), then consumes them all; a "
           "latency workload (1 partition) times records from send to receipt. Produced for this section by:",
           "", "```sh", f".venv/bin/{meta['command']}", "```", "",
           f"- Started {meta['started']}, finished {meta.get('finished', '(unfinished)')}, "
           f"{meta['rounds']} round(s)",
           f"- Machine: {meta['machine']['cpu']}, {meta['machine']['cores']} cores, "
           f"{meta['machine']['mem_gb']:.1f} GB RAM; all seven processes (three brokers, ZooKeeper or not, the "
           "load generator) share those cores",
           f"- pykafkad {v['pykafkad']}{meta.get('pykafkad_tree', '')} on {v['python']}, "
           f"ZooKeeper {v.get('zookeeper', '?')} (-Xmx256m); "
           f"Apache Kafka {v['kafka']}, each broker with -Xmx1G -Xms1G (kafka-server-start.sh); "
           f"librdkafka {v.get('librdkafka', '?')}",
           (f"- Load average (1 min) at each cluster's start and stop: min {min(ones):.2f}, mean "
            f"{statistics.fmean(ones):.2f}, max {max(ones):.2f} on {meta['machine']['cores']} cores"
            if ones else "- Load average: not sampled"),
           machine_speed.describe(meta.get("machine_speed", [])),
           "- Settings on both besides listeners and log dirs: `offsets.topic.replication.factor=3`, "
           "`group.initial.rebalance.delay.ms=0`; pykafkad's `zookeeper.connect` has a chroot of its own. "
           "Peak RSS is each broker's peak while the workload ran (sampled every 50 ms), summed over the three; "
           "ZooKeeper's is given apart.", ""]
    summary = _summary(results)
    if summary:
        out += ["Ratios pykafkad/Kafka (throughput: above 1 is pykafkad faster; memory and times: below 1 is "
                "pykafkad smaller or quicker):", "", *summary, ""]
    notes = NOTES.read_text().strip() if NOTES.exists() else ""
    if notes:
        out += [notes, ""]
    out += ["### Start-up", "", *_table(_runs_for(results, None), STARTUP_METRICS), ""]
    for d in results["workloads"]:
        if d.get("kind") == "latency":
            tool = (f"Kafka's `EndToEndLatency` tool (Java clients, one record in flight): "
                    f"{int(d['rate'] * d['seconds']):,} of them" if d["client"] == "java" else
                    f"A librdkafka (confluent-kafka) producer at {d['rate']:,} records/s for {d['seconds']:g} s, "
                    "`linger.ms=0`, each value stamped with its send time, read back by a consumer in the same "
                    "process")
            out += [f"### {d['key']}", "", f"{tool}; records of {d['record_size']} bytes, acks={d['acks']}, "
                    "one partition of replication factor 3, after an unmeasured warm-up of "
                    f"{LATENCY_WARMUP_S:g} s on another such topic.", "",
                    *_table(_runs_for(results, d["key"]), LATENCY_METRICS), ""]
            out += _failures(results, d["key"])
            continue
        if d.get("kind") == "creation":
            out += [f"### {d['key']}", "", f"One CreateTopics of {d['partitions']:,} partitions of replication "
                    "factor 3 (after an unmeasured one-partition topic), from the request until the metadata "
                    "shows every partition led with all three replicas in sync (librdkafka's admin client, "
                    "polling every 50 ms).", "",
                    *_table(_runs_for(results, d["key"]), {"create_topic_s": METRICS["create_topic_s"]}), ""]
            out += _failures(results, d["key"])
            continue
        tool = ("Kafka's `kafka-producer-perf-test` (--throughput -1) then `kafka-consumer-perf-test` (a group "
                "consumer, fetch rate excluding the join)" if d["client"] == "java" else
                "librdkafka (confluent-kafka) producer as fast as it takes records, then an assign() consumer "
                "(`fetch.queue.backoff.ms=10`)")
        out += [f"### {d['key']}", "", f"{tool}: {d['records']:,} records of {d['record_size']} bytes, "
                f"acks={d['acks']}, no compression, {d['partitions']} partitions of replication factor 3.", "",
                *_table(_runs_for(results, d["key"]), METRICS), ""]
        out += _failures(results, d["key"])
    failed = [r for r in results["runs"] if "error" in r]
    for r in failed:
        out.append(f"- {r['broker']} cluster, round {r['round'] + 1}, failed: `{r['error'][:300]}`")
    out += [END]
    return "\n".join(out)


def update_results_md(section: str, path: Path = RESULTS_MD) -> None:
    """Replace the delimited cluster section of ``path`` (or append it); the rest is left as it is."""
    text = path.read_text() if path.exists() else ""
    begin, end = text.find(BEGIN), text.find(END)
    if begin >= 0 and end > begin:
        text = text[:begin] + section + text[end + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def main(argv: list[str]) -> int:
    if argv[:1] == ["report"]:
        if len(argv) != 2:
            raise SystemExit("usage: python -m benchmarks.cluster report DIR/results.json")
        update_results_md(render_section(json.loads(Path(argv[1]).read_text())))
        print(RESULTS_MD)
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000,
                        help="1 KiB acks=all records (once with Kafka's perf tools, once with librdkafka); "
                             "0 leaves those workloads out")
    parser.add_argument("--creation-partitions", type=int, default=2000,
                        help="partitions of the RF 3 topic whose creation is timed; 0 leaves that workload out")
    parser.add_argument("--small-records", type=int, default=300_000,
                        help="100 B acks=1 records (librdkafka); 0 leaves that workload out")
    parser.add_argument("--latency-seconds", type=float, default=10.0,
                        help="seconds of each end-to-end latency workload; 0 leaves them out")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of pykafkad then Kafka")
    parser.add_argument("--brokers", default="pykafkad,kafka", help="comma-separated subset of pykafkad,kafka")
    parser.add_argument("--out", default=str(OUT_DIR), help="directory for results.json and the clusters' data")
    parser.add_argument("--results-md", default=str(RESULTS_MD), help="the RESULTS.md whose cluster section to write")
    parser.add_argument("--no-results-md", action="store_true", help="write results.json only")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    args.command_line = " ".join(shlex.quote(a) for a in ["python", "-m", "benchmarks.cluster", *argv])
    install_cleanup()
    results = run(args)
    if not args.no_results_md:
        update_results_md(render_section(results), Path(args.results_md))
        print(f"wrote the cluster section of {args.results_md}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
