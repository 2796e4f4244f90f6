"""The fault injector's clients: the Java clients (``compat_tests/java/FaultClient.java``, one JVM per
client so a member can be crashed with SIGKILL) and librdkafka (confluent-kafka, on threads of the
harness), writing every event to the history.

Three workloads share the cluster:

* **queue**: idempotent acks=all producers (Java ``jp1``, librdkafka ``rp1``) write unique values to
  ``queue``; a Java group (``jc1``..``jc3``, range, ``jc1`` static) and a librdkafka member (``rc1``, a
  group of its own) read and commit.  A monitor reads both groups' committed offsets every second.
* **transactions**: transactional producers (Java ``jt1``, librdkafka ``rt1``) write 2-4 records over
  ``txn-a`` and ``txn-b`` per transaction, aborting every fourth on purpose; a Java read_committed
  reader (``jr1``) follows them.  A consume-transform-produce group (``jx1`` static, ``jx2``) copies
  ``ctp-in`` (written by Java ``jp2``) to ``ctp-out`` exactly once.
* **groups**: the members of ``queue-j`` and ``ctp`` are crashed, stopped and started again by the
  member schedule while the cluster faults run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_tests.faults.history import History
from compat_tests.broker_process import REPO_ROOT

PROGRAM = REPO_ROOT / "compat_tests" / "java" / "FaultClient.java"
QUEUE, TXN_TOPICS, CTP_IN, CTP_OUT = "queue", ("txn-a", "txn-b"), "ctp-in", "ctp-out"
PARTITIONS = {QUEUE: 6, "txn-a": 3, "txn-b": 3, CTP_IN: 6, CTP_OUT: 6}
TXN_PARTITIONS = 3
QUEUE_GROUP_JAVA, QUEUE_GROUP_RD, CTP_GROUP = "queue-j", "queue-r", "ctp"
MEMBERS = ("jc1", "jc2", "jc3", "jx1", "jx2")
JAVA_TXN_ID = "jt1"
ABORT_EVERY = 4


def java_classpath() -> str:
    lib = os.environ.get("JAVA_LIB", str(REPO_ROOT / ".cache" / "java" / "lib"))
    return f"{lib}/*"


def compile_program(classes: Path) -> None:
    javac = Path(subprocess.run(["sh", "-c", "readlink -f $(command -v java)"], capture_output=True, text=True,
                                check=True).stdout.strip()).with_name("javac")
    subprocess.run([str(javac), "-d", str(classes), "-cp", java_classpath(), str(PROGRAM)], check=True,
                   capture_output=True, timeout=180)


def create_topics(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, n, 3, config={"min.insync.replicas": "2"})
                                   for t, n in PARTITIONS.items()], operation_timeout=60)
    for future in futures.values():
        future.result(90)


class JavaClient:
    """One FaultClient JVM; its stdout lines go to the history."""

    def __init__(self, name: str, args: list[str], classes: Path, history: History, work: Path) -> None:
        self.name, self.args, self.classes, self.history, self.work = name, args, classes, history, work
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        # No PR_SET_PDEATHSIG here: members are restarted from the member schedule's thread, and the
        # signal fires when that thread ends.  A client whose harness dies reads EOF on stdin and stops.
        stderr = (self.work / f"{self.name}.stderr.log").open("a")
        self.proc = subprocess.Popen(
            ["java", "-Xmx192m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", f"{self.classes}{os.pathsep}{java_classpath()}",
             "FaultClient", *self.args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
        self.history.record("client-start", self.name)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                self.history.add(json.loads(line))
            except json.JSONDecodeError:
                self.history.record("note", self.name, text=line.strip()[:300])

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 90) -> None:
        if not self.alive():
            return
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.history.record("note", self.name, text="did not stop in time: killed")
            self.proc.kill()
            self.proc.wait(30)
        self.history.record("client-stop", self.name)

    def crash(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)
            self.history.record("client-crash", self.name)


class RdProducer(threading.Thread):
    """librdkafka's idempotent acks=all producer of unique values NAME-SEQ at a steady rate."""

    def __init__(self, name: str, bootstrap: str, topic: str, rate: float, history: History) -> None:
        super().__init__(daemon=True, name=name)
        self.client, self.topic, self.rate, self.history = name, topic, rate, history
        self.stopping = threading.Event()
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 5, "message.timeout.ms": 120000, "client.id": name})

    def _report(self, err: Any, msg: Any) -> None:
        v = msg.value().decode()
        if err is None:
            self.history.record("ack", self.client, v=v, t=msg.topic(), p=msg.partition(), o=msg.offset())
        else:
            self.history.record("send_error", self.client, v=v, err=str(err))

    def run(self) -> None:
        started, seq = time.monotonic(), 0
        while not self.stopping.is_set():
            v = f"{self.client}-{seq}".encode()
            try:
                self.producer.produce(self.topic, v, key=v, on_delivery=self._report)
                seq += 1
            except BufferError:
                pass
            self.producer.poll(max(0.0, started + seq / self.rate - time.monotonic()))
        self.producer.flush(150)


class RdTransactions(threading.Thread):
    """librdkafka's transactional producer over ``TXN_TOPICS``: 2-4 records a transaction, every
    ABORT_EVERY-th aborted on purpose; each transaction's outcome is recorded with its records."""

    def __init__(self, name: str, bootstrap: str, rate: float, history: History) -> None:
        super().__init__(daemon=True, name=name)
        self.client, self.bootstrap, self.rate, self.history = name, bootstrap, rate, history
        self.stopping = threading.Event()
        self.rng = random.Random(name)

    def _producer(self) -> Producer:
        p = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": self.client,
                      "transaction.timeout.ms": 20000, "linger.ms": 5, "client.id": self.client})
        p.init_transactions(60)
        return p

    def _commit(self, producer: Producer) -> None:
        # A commit that timed out may be retried: it completes what the first one started.
        for attempt in range(5):
            try:
                producer.commit_transaction(60)
                return
            except KafkaException as e:
                if not e.args[0].retriable() or attempt == 4:
                    raise
                self.history.record("error", self.client, err=str(e.args[0]))

    def run(self) -> None:
        producer: Producer | None = None
        k = 0
        while not self.stopping.wait(1 / self.rate):
            tid = f"{self.client}-{k}"
            k += 1
            values: list[list[Any]] = []
            outcome = "unknown"
            try:
                if producer is None:
                    producer = self._producer()
                producer.begin_transaction()
                for i in range(self.rng.randint(2, 4)):
                    topic, part = self.rng.choice(TXN_TOPICS), self.rng.randrange(TXN_PARTITIONS)
                    v = f"{tid}-{i}"
                    producer.produce(topic, v.encode(), key=v.encode(), partition=part)
                    values.append([v, topic, part])
                if k % ABORT_EVERY == 0:
                    producer.abort_transaction(60)
                    outcome = "aborted"
                else:
                    self._commit(producer)
                    outcome = "committed"
            except KafkaException as e:
                error = e.args[0]
                self.history.record("error", self.client, err=str(error))
                if producer is not None and not error.fatal():
                    try:
                        producer.abort_transaction(60)
                        outcome = "aborted"
                    except KafkaException as e2:
                        self.history.record("error", self.client, err=str(e2.args[0]))
                        producer = None
                else:
                    producer = None  # fatal (fenced): a new producer with the same id
            self.history.record("txn", self.client, id=tid, outcome=outcome, values=values)


class RdConsumer(threading.Thread):
    """A librdkafka group member that reads ``queue`` and commits after each message batch."""

    def __init__(self, name: str, bootstrap: str, group: str, history: History) -> None:
        super().__init__(daemon=True, name=name)
        self.client, self.history = name, history
        self.stopping = threading.Event()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                  "session.timeout.ms": 10000})

    def run(self) -> None:
        self.consumer.subscribe([QUEUE])
        while not self.stopping.is_set():
            msgs = self.consumer.consume(100, 0.2)
            got = [m for m in msgs if m.error() is None]
            member = self.consumer.memberid()
            for m in got:
                self.history.record("read", self.client, v=m.value().decode(), t=m.topic(), p=m.partition(),
                                    o=m.offset(), member=member, gen=None)
            if got:
                try:
                    self.consumer.commit(asynchronous=False)
                except KafkaException as e:
                    self.history.record("error", self.client, err=str(e.args[0]))
        self.consumer.close()


class OffsetMonitor(threading.Thread):
    """Reads the groups' committed offsets every second (OffsetFetch), for the checker's "no committed
    offset moves backwards"."""

    def __init__(self, bootstrap: str, groups: list[str], history: History) -> None:
        super().__init__(daemon=True, name="offset-monitor")
        self.groups, self.history = groups, history
        self.stopping = threading.Event()
        self.consumers = {g: Consumer({"bootstrap.servers": bootstrap, "group.id": g,
                                       "enable.auto.commit": False}) for g in groups}

    def run(self) -> None:
        parts = [TopicPartition(QUEUE, p) for p in range(PARTITIONS[QUEUE])]
        while not self.stopping.wait(1.0):
            for group, consumer in self.consumers.items():
                try:
                    got = consumer.committed(parts, timeout=5)
                except KafkaException:
                    continue  # the coordinator is moving: the next round asks again
                self.history.record("committed", "monitor", group=group,
                                    offsets={tp.partition: tp.offset for tp in got if tp.offset >= 0})
        for consumer in self.consumers.values():
            consumer.close()


class Workloads:
    """Every client of a run, started and stopped together; members restartable by name."""

    def __init__(self, bootstrap: str, history: History, work: Path) -> None:
        self.bootstrap, self.history, self.work = bootstrap, history, work
        self.classes = work / "classes"
        compile_program(self.classes)
        b = bootstrap
        java = {
            "jp1": ["produce", "jp1", b, QUEUE, "40"],
            "jp2": ["produce", "jp2", b, CTP_IN, "20"],
            "jt1": ["txn", JAVA_TXN_ID, b, ",".join(TXN_TOPICS), str(TXN_PARTITIONS), "4", str(ABORT_EVERY)],
            "jr1": ["read", "jr1", b, ",".join(TXN_TOPICS), str(TXN_PARTITIONS)],
            "jc1": ["consume", "jc1", b, QUEUE, QUEUE_GROUP_JAVA, "range", "true"],
            "jc2": ["consume", "jc2", b, QUEUE, QUEUE_GROUP_JAVA, "range", "false"],
            "jc3": ["consume", "jc3", b, QUEUE, QUEUE_GROUP_JAVA, "range", "false"],
            "jx1": ["ctp", "jx1", b, CTP_IN, CTP_OUT, CTP_GROUP, "true"],
            "jx2": ["ctp", "jx2", b, CTP_IN, CTP_OUT, CTP_GROUP, "false"],
        }
        self.java = {name: JavaClient(name, args, self.classes, history, work) for name, args in java.items()}
        self.rp1 = RdProducer("rp1", b, QUEUE, 40, history)
        self.rt1 = RdTransactions("rt1", b, 3, history)
        self.rc1 = RdConsumer("rc1", b, QUEUE_GROUP_RD, history)
        self.monitor = OffsetMonitor(b, [QUEUE_GROUP_JAVA, QUEUE_GROUP_RD], history)

    def start(self) -> None:
        for client in self.java.values():
            client.start()
        for thread in (self.rp1, self.rt1, self.rc1, self.monitor):
            thread.start()

    def producers(self) -> None:
        """Stop every writer (their last writes acknowledged or failed)."""
        for name in ("jp1", "jp2", "jt1"):
            self.java[name].stop()
        for thread in (self.rp1, self.rt1):
            thread.stopping.set()
        for thread in (self.rp1, self.rt1):
            thread.join(180)

    def restart_members(self) -> None:
        for name in MEMBERS:
            if not self.java[name].alive():
                self.java[name].start()

    def readers(self) -> None:
        for name in ("jr1", *MEMBERS):
            self.java[name].stop()
        for thread in (self.rc1, self.monitor):
            thread.stopping.set()
            thread.join(60)

    def close(self) -> None:
        for client in self.java.values():
            client.crash()
