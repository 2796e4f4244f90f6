"""One fault-injection run: the cluster in namespaces, the workloads, the two schedules (cluster faults and
group-member faults) for the run's duration, then the heal, the post-heal checks, the final reads and
the history checker.  Returns a result dict (what ``report.py`` renders) and prints its summary.

After the last fault heals, the run requires (each failure is an anomaly):

* every partition, internal ones included, has a leader and its full ISR within ``HEAL_TIMEOUT_S``;
* every transaction left open is completed or aborted within ``transaction.max.timeout.ms`` (the
  last stable offset of every transactional partition reaches its high watermark);
* every coordinator answers: each group is described without error, and each transactional id can
  start a new producer (InitProducerId).
"""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kazoo.client import KazooClient

from cluster_tests.faults import checker
from cluster_tests.faults.history import History
from cluster_tests.faults.nemesis import Nemesis
from cluster_tests.faults.network import Network
from cluster_tests.faults.nodes import Broker, KafkaNode, PykafkadBroker, ZooKeeperNode
from cluster_tests.faults.schedule import cluster_schedule, member_schedule
from cluster_tests.faults.workloads import (
    CTP_GROUP,
    CTP_IN,
    JAVA_TXN_ID,
    MEMBERS,
    PARTITIONS,
    QUEUE,
    QUEUE_GROUP_JAVA,
    QUEUE_GROUP_RD,
    TXN_TOPICS,
    Workloads,
    create_topics,
)

SESSION_TIMEOUT_MS = 6000          # the brokers' ZooKeeper sessions
GROUP_SESSION_TIMEOUT_MS = 10000   # the consumers' group sessions
REBALANCE_ALLOWANCE_MS = 10000     # a rebalance's own rounds after the session expired
TRANSACTION_MAX_TIMEOUT_MS = 60000
HEAL_TIMEOUT_S = 90.0
CATCH_UP_TIMEOUT_S = 180.0
COMMON = {
    "offsets.topic.replication.factor": "3", "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2", "default.replication.factor": "3", "min.insync.replicas": "2",
    "group.initial.rebalance.delay.ms": "0", "auto.create.topics.enable": "false",
    "transaction.max.timeout.ms": str(TRANSACTION_MAX_TIMEOUT_MS),
}


class FaultCluster:
    """ZooKeeper and three pykafkad brokers, or three Kafka KRaft nodes, each in its namespace."""

    def __init__(self, kind: str, work: Path, kafka_lib: Path | None = None) -> None:
        self.kind = kind
        self.zookeeper_used = kind == "pykafkad"
        names = (["zk"] if self.zookeeper_used else []) + ["b1", "b2", "b3"]
        self.network = Network(names).build()
        self.zookeeper = ZooKeeperNode(self.network, work) if self.zookeeper_used else None
        self.brokers: dict[str, Broker] = {}
        for i in (1, 2, 3):
            if kind == "pykafkad":
                self.brokers[f"b{i}"] = PykafkadBroker(i, self.network, work, {
                    **COMMON, "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS)})
            else:
                assert kafka_lib is not None
                voters = ",".join(f"{j}@{self.network.address(f'b{j}')}:9093" for j in (1, 2, 3))
                self.brokers[f"b{i}"] = KafkaNode(i, self.network, work, COMMON, voters, kafka_lib)
        self._zk: KazooClient | None = None

    @property
    def bootstrap(self) -> str:
        return ",".join(b.endpoint for b in self.brokers.values())

    def start(self) -> None:
        if self.zookeeper is not None:
            self.zookeeper.start()
        for broker in self.brokers.values():
            broker.start(wait=False)
        for broker in self.brokers.values():
            broker.wait_listening()
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + 120
        while len(admin.list_topics(timeout=10).brokers) < 3:
            if time.monotonic() > deadline:
                raise RuntimeError("three brokers did not register within 120 s")
            time.sleep(0.2)

    def controller(self) -> int | None:
        if self.zookeeper is None:
            return None
        if self._zk is None:
            self._zk = KazooClient(hosts=f"{self.zookeeper.endpoint}/faults", timeout=5)
            self._zk.start(timeout=5)
        data, _ = self._zk.get("/controller")
        return int(json.loads(data)["brokerid"])

    def close(self) -> None:
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
        for broker in self.brokers.values():
            broker.kill9()
        if self.zookeeper is not None:
            self.zookeeper.kill9()
        for broker in self.brokers.values():
            broker.close()
        self.network.close()


# -- post-heal checks -------------------------------------------------------------------------------

def wait_full_isr(bootstrap: str, out: checker.Anomalies) -> float:
    """Seconds until every partition has a leader and its full ISR (an anomaly if not in time)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    t0 = time.monotonic()
    bad: list[str] = []
    while time.monotonic() - t0 < HEAL_TIMEOUT_S:
        try:
            md = admin.list_topics(timeout=10)
        except Exception as e:  # noqa: BLE001 - no metadata yet: ask again
            bad = [str(e)]
            time.sleep(0.5)
            continue
        bad = [f"{t}-{p}: leader {part.leader} isr {part.isrs} replicas {part.replicas}"
               for t, topic in md.topics.items() for p, part in topic.partitions.items()
               if part.leader < 0 or sorted(part.isrs) != sorted(part.replicas)]
        if not bad:
            return time.monotonic() - t0
        time.sleep(0.5)
    for line in bad:
        out.add("under-replicated", f"{HEAL_TIMEOUT_S:.0f} s after the heal: {line}")
    return HEAL_TIMEOUT_S


def wait_caught_up(bootstrap: str, out: checker.Anomalies) -> None:
    """The groups' committed offsets reach the end of what they read (after the writers stopped)."""
    watch = Consumer({"bootstrap.servers": bootstrap, "group.id": "faults-watch", "enable.auto.commit": False})
    lagging: list[str] = []
    deadline = time.monotonic() + CATCH_UP_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            lagging = []
            for group, topic in ((QUEUE_GROUP_JAVA, QUEUE), (QUEUE_GROUP_RD, QUEUE), (CTP_GROUP, CTP_IN)):
                reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
                try:
                    parts = [TopicPartition(topic, p) for p in range(PARTITIONS[topic])]
                    committed = {tp.partition: tp.offset for tp in reader.committed(parts, timeout=10)}
                    for p in range(PARTITIONS[topic]):
                        high = watch.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                        if committed.get(p, -1) < high:
                            lagging.append(f"group {group} {topic}-{p}: committed {committed.get(p)} of {high}")
                except Exception as e:  # noqa: BLE001 - a coordinator still moving: ask again
                    lagging.append(f"group {group}: {e}")
                finally:
                    reader.close()
            if not lagging:
                return
            time.sleep(1)
    finally:
        watch.close()
    for line in lagging:
        out.add("no-progress", f"{CATCH_UP_TIMEOUT_S:.0f} s after the heal: {line}")


def wait_transactions_settled(bootstrap: str, out: checker.Anomalies) -> None:
    """Every transactional partition's last stable offset reaches its high watermark."""
    committed = Consumer({"bootstrap.servers": bootstrap, "group.id": "faults-lso",
                          "isolation.level": "read_committed"})
    uncommitted = Consumer({"bootstrap.servers": bootstrap, "group.id": "faults-hw",
                            "isolation.level": "read_uncommitted"})
    parts = [TopicPartition(t, p) for t in (*TXN_TOPICS, "ctp-out") for p in range(PARTITIONS[t])]
    open_parts: list[str] = []
    deadline = time.monotonic() + TRANSACTION_MAX_TIMEOUT_MS / 1000 + 30
    try:
        while time.monotonic() < deadline:
            open_parts = []
            for tp in parts:
                try:
                    lso = committed.get_watermark_offsets(tp, timeout=10)[1]
                    hw = uncommitted.get_watermark_offsets(tp, timeout=10)[1]
                except Exception as e:  # noqa: BLE001 - ask again
                    open_parts.append(f"{tp.topic}-{tp.partition}: {e}")
                    continue
                if lso < hw:
                    open_parts.append(f"{tp.topic}-{tp.partition}: last stable offset {lso}, high watermark {hw}")
            if not open_parts:
                return
            time.sleep(1)
    finally:
        committed.close()
        uncommitted.close()
    for line in open_parts:
        out.add("stuck-transaction", f"transaction.max.timeout.ms after the heal: {line}")


def check_coordinators(bootstrap: str, out: checker.Anomalies) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for group, future in admin.describe_consumer_groups([QUEUE_GROUP_JAVA, QUEUE_GROUP_RD, CTP_GROUP]).items():
        try:
            future.result(30)
        except Exception as e:  # noqa: BLE001 - the answer is the finding
            out.add("coordinator", f"group {group}: DescribeGroups failed: {e}")
    for tid in (JAVA_TXN_ID, "rt1", "ctp-probe"):
        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
        try:
            producer.init_transactions(60)
        except Exception as e:  # noqa: BLE001 - the answer is the finding
            out.add("coordinator", f"transactional id {tid}: InitProducerId failed: {e}")
        finally:
            producer.flush(10)
            del producer  # librdkafka's handle is destroyed now, while the cluster still runs


def read_all(bootstrap: str, topic: str, committed: bool) -> list[checker.Read]:
    """Every record of ``topic`` from offset 0 to its end (the last stable offset when ``committed``)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"faults-final-{topic}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": "read_committed" if committed else "read_uncommitted"})
    parts = [TopicPartition(topic, p, 0) for p in range(PARTITIONS[topic])]
    consumer.assign(parts)
    got: list[checker.Read] = []
    ended: set[int] = set()
    deadline = time.monotonic() + 180
    try:
        while len(ended) < len(parts) and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 1.0):
                if msg.error() is None:
                    got.append((msg.value().decode(), msg.partition(), msg.offset()))
                elif msg.error().code() == KafkaError._PARTITION_EOF:
                    ended.add(msg.partition())
        if len(ended) < len(parts):
            raise RuntimeError(f"{topic}: partitions {sorted(set(range(len(parts))) - ended)} not read to the end")
    finally:
        consumer.close()
    return got


# -- the run ------------------------------------------------------------------------------------------

def run(kind: str, seed: int, duration_s: float, work: Path, kafka_lib: Path | None = None,
        log: Any = print) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    history = History(work / "history.jsonl")
    anomalies = checker.Anomalies()
    cluster = FaultCluster(kind, work, kafka_lib)
    started_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    workloads: Workloads | None = None
    try:
        cluster.start()
        log(f"faults: {kind} cluster up ({cluster.bootstrap}); seed {seed}, {duration_s:.0f} s")
        create_topics(cluster.bootstrap)
        workloads = Workloads(cluster.bootstrap, history, work)
        workloads.start()
        steps = cluster_schedule(seed, duration_s, cluster.zookeeper_used, SESSION_TIMEOUT_MS / 1000)
        members = member_schedule(seed, duration_s, list(MEMBERS))
        nemesis = Nemesis(cluster.network, cluster.brokers, cluster.zookeeper, history, lambda: cluster.bootstrap,
                          random.Random(seed), topic=QUEUE, group=QUEUE_GROUP_JAVA, transactional_id=JAVA_TXN_ID,
                          controller=cluster.controller)
        stop = threading.Event()
        t0 = time.monotonic()
        churn = threading.Thread(target=_member_faults, args=(workloads, members, t0, stop, history), daemon=True)
        churn.start()
        progress = threading.Thread(target=_progress, args=(history, nemesis, t0, duration_s, stop, log), daemon=True)
        progress.start()
        nemesis.run(steps, t0, stop)
        stop.set()
        churn.join()
        nemesis.heal_all(lambda: None)
        workloads.restart_members()
        healed_ms = int(time.time() * 1000)
        log(f"faults: schedule done ({len(nemesis.injected)} faults); checking the healed cluster")
        isr_s = wait_full_isr(cluster.bootstrap, anomalies)
        workloads.producers()
        wait_caught_up(cluster.bootstrap, anomalies)
        wait_transactions_settled(cluster.bootstrap, anomalies)
        members_stopped_ms = int(time.time() * 1000)
        workloads.readers()
        logs = {t: read_all(cluster.bootstrap, t, committed=t in (*TXN_TOPICS, "ctp-out")) for t in PARTITIONS}
        check_coordinators(cluster.bootstrap, anomalies)
        events = [e for e in history.events if e["ms"] <= members_stopped_ms or e["c"] not in MEMBERS]
        ops = {"queue": checker.check_queue(events, logs, anomalies),
               "transactions": checker.check_transactions(events, logs, anomalies),
               "groups": checker.check_groups(events, PARTITIONS, healed_ms, GROUP_SESSION_TIMEOUT_MS,
                                              REBALANCE_ALLOWANCE_MS, anomalies)}
        member_faults = [e for e in history.events if e["e"] in ("client-crash", "client-stop")
                         and e["c"] in MEMBERS and e["ms"] < healed_ms]
        faults = nemesis.summary()
        for e in member_faults:
            kind_name = "crash-member" if e["e"] == "client-crash" else "stop-member"
            faults[kind_name] = faults.get(kind_name, 0) + 1
        result = {
            "broker": kind, "seed": seed, "duration_s": duration_s, "started": started_at,
            "elapsed_s": round(time.monotonic() - t0, 1), "heal_to_full_isr_s": round(isr_s, 1),
            "faults": faults, "fault_log": nemesis.injected, "restarts": nemesis.restarts,
            "network": "netem" if cluster.network.netem else "tbf (no netem in this kernel)",
            "operations": ops, "anomalies": anomalies.counts(), "examples": anomalies.examples(),
            "history": str(work / "history.jsonl"),
        }
        (work / "result.json").write_text(json.dumps(result, indent=2))
        log(summary(result))
        return result
    finally:
        if workloads is not None:
            workloads.close()
        cluster.close()
        history.close()


def _member_faults(workloads: Workloads, steps: list[Any], t0: float, stop: threading.Event,
                   history: History) -> None:
    for step in steps:
        if stop.wait(max(0.0, t0 + step.at_s - time.monotonic())):
            return
        client = workloads.java[step.target]
        if step.kind == "crash-member":
            client.crash()
        else:
            client.stop()
        stop.wait(step.hold_s)
        client.start()


def _progress(history: History, nemesis: Nemesis, t0: float, duration_s: float, stop: threading.Event,
              log: Any) -> None:
    while not stop.wait(60):
        acks = sum(1 for e in history.events if e["e"] == "ack")
        txns = sum(1 for e in history.events if e["e"] == "txn")
        log(f"faults: {time.monotonic() - t0:.0f}/{duration_s:.0f} s, {len(nemesis.injected)} faults, "
            f"{acks} acknowledged writes, {txns} transactions")


def summary(result: dict[str, Any]) -> str:
    lines = [f"faults: {result['broker']} seed {result['seed']}, {result['elapsed_s']} s",
             "  faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(result["faults"].items()))]
    for workload, ops in result["operations"].items():
        lines.append(f"  {workload}: " + ", ".join(f"{k} {v}" for k, v in ops.items()))
    if result["anomalies"]:
        lines.append("  ANOMALIES: " + ", ".join(f"{k} {v}" for k, v in result["anomalies"].items()))
        for kind, examples in result["examples"].items():
            for example in examples:
                lines.append(f"    {kind}: {example}")
    else:
        lines.append("  anomalies: none")
    if result["restarts"]:
        lines.append("  nodes that exited by themselves: " + "; ".join(result["restarts"]))
    return "\n".join(lines)
