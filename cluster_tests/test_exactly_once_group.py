"""Exactly-once consume-transform-produce on three brokers while the group changes (issue 28).

A group of Java ``KafkaConsumer`` members (read_committed), each with its own transactional
``KafkaProducer`` that copies what its consumer polled and commits the consumed offsets in the same
transaction (``sendOffsetsToTransaction``: TxnOffsetCommit to the group coordinator, EndTxn
markers to ``__consumer_offsets``), runs on three pykafkad brokers with replication factor 3,
``min.insync.replicas=2`` and ``transaction.state.log.replication.factor=3``, over 10-partition
topics.  Members join, leave, and crash in the middle of a transaction, on a schedule driven by
progress (each step waits until the records written so far were copied), under the range and
cooperative-sticky assignors and with static membership.  The copy must finish, with no member
fenced, and the output read with read_committed must hold every input record exactly once.

What it caught: in transaction version 2 each EndTxn bumps the producer's epoch, and the first
batch of the next transaction to a partition can be refused with CONCURRENT_TRANSACTIONS while the
previous transaction's markers complete; a second batch of the same partition, in another request,
was then appended at sequence 2 with nothing before it.  The first batch got
OUT_OF_ORDER_SEQUENCE_NUMBER on every retry, its transaction never committed, its member never
rejoined, and the whole group waited in REBALANCE_IN_PROGRESS until the transaction timed out (the
member's producer then fenced).  As in Kafka, the log now requires sequence 0 first after a marker
bumped the epoch, and the leader's verification keeps the lowest sequence it was asked about
(Kafka's VerificationStateEntry), so a later batch also waits for an earlier one when the
producer is new to the partition.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest

from cluster_tests.clients import create_topic, produce, read_committed
from cluster_tests.conftest import Cluster
from compat_tests.broker_process import REPO_ROOT
from compat_tests.java_tools import java_classpath, java_executable

PROGRAM = REPO_ROOT / "compat_tests" / "java" / "ExactlyOnceGroup.java"
PARTITIONS = 10
BATCH = 300
# No initial rebalance delay: the first members' joins are not held back 3 s (the schedule changes the
# group at every step anyway).
SETTINGS = {"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
            "min.insync.replicas": "2", "offsets.topic.replication.factor": "3",
            "group.initial.rebalance.delay.ms": "0"}
# Each step changes the group, then writes one more batch of input.  ``crash`` halts a member's JVM
# in the middle of a transaction (its offsets sent, not committed); the next ``start`` of that name
# (the same transactional.id, and group.instance.id when static) fences and aborts what it left open.
SCHEDULE = [
    ["start a", "start b", "start c"],
    ["stop b"],
    ["start d"],
    ["crash a"],
    ["start a"],
    ["start b", "stop c"],
    ["crash d"],
    ["start d", "start c"],
    ["stop a"],
    ["stop b"],
]
STEP_TIMEOUT_S = 90.0


class Group:
    """The members' processes (``ExactlyOnceGroup.java``, compiled once); their event lines are
    collected as they come."""

    def __init__(self, bootstrap: str, source: str, target: str, group: str, strategy: str, static: bool,
                 work: Path, classes: Path) -> None:
        self.classes = classes
        self.args = [bootstrap, source, target, group, strategy, str(static).lower()]
        self.work = work
        self.events: list[list[str]] = []
        self.committed = 0
        self.members: dict[str, subprocess.Popen[str]] = {}
        self.crashing: list[subprocess.Popen[str]] = []
        self._changed = threading.Condition()

    def command(self, line: str) -> None:
        verb, name = line.split()
        if verb == "start":
            stderr = (self.work / f"member-{name}.stderr.log").open("a")
            proc = subprocess.Popen(
                [java_executable(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                 "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                 "-cp", f"{self.classes}{os.pathsep}{java_classpath()}", "ExactlyOnceGroup", *self.args, name],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
            self.members[name] = proc
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()
        else:
            proc = self.members.pop(name)
            assert proc.stdin is not None
            proc.stdin.write(verb + "\n")
            proc.stdin.flush()
            if verb == "crash":
                self.crashing.append(proc)

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            words = line.split(maxsplit=2)
            with self._changed:
                self.events.append(words)
                if words[0] == "COMMITTED":
                    self.committed += int(words[2])
                self._changed.notify_all()

    def fatal(self) -> list[str]:
        return [" ".join(e) for e in self.events if e[0] == "FATAL"]

    def wait_committed(self, count: int, timeout: float = STEP_TIMEOUT_S) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self.committed >= count or self.fatal(), timeout)
            assert not self.fatal(), self.report()
            assert self.committed >= count, f"{self.committed} of {count} records copied\n{self.report()}"

    def wait_crashed(self) -> None:
        for proc in self.crashing:
            proc.wait(STEP_TIMEOUT_S)
        self.crashing.clear()
        assert not self.fatal(), self.report()

    def report(self) -> str:
        tail = [" ".join(e).strip() for e in self.events[-40:]]
        return "events:\n" + "\n".join(tail)

    def close(self) -> None:
        procs = list(self.members.values()) + self.crashing
        for name in list(self.members):
            self.command(f"stop {name}")
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)


@pytest.fixture(scope="module")
def member_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ExactlyOnceGroup.java`` compiled once for every variant."""
    classes = tmp_path_factory.mktemp("exactly-once-group") / "classes"
    subprocess.run([str(Path(java_executable()).with_name("javac")), "-d", str(classes), "-cp",
                    java_classpath(), str(PROGRAM)], check=True, capture_output=True, timeout=120)
    return classes


@pytest.mark.cluster_timeout(600)
@pytest.mark.parametrize(("strategy", "static"), [("range", False), ("cooperative-sticky", False),
                                                  ("cooperative-sticky", True)],
                         ids=["range", "cooperative-sticky", "static"])
def test_exactly_once_copy_while_members_join_and_leave(cluster: Cluster, tmp_path: Path, member_classes: Path,
                                                        strategy: str, static: bool) -> None:
    cluster.start_brokers(SETTINGS)
    source, target = "eos-in", "eos-out"
    create_topic(cluster, source, PARTITIONS)
    create_topic(cluster, target, PARTITIONS)
    group = Group(cluster.bootstrap, source, target, f"eos-{strategy}-{static}", strategy, static, tmp_path,
                  member_classes)
    written = 0
    try:
        for step in SCHEDULE:
            for command in step:
                group.command(command)
            produce(cluster.bootstrap, source, list(range(written, written + BATCH)))
            written += BATCH
            if group.crashing:
                # Its partitions wait for the restart (next step) to abort what it left open.
                group.wait_crashed()
            else:
                group.wait_committed(written)
    finally:
        group.close()
    assert not group.fatal(), group.report()
    got = [int(v) for v in read_committed(cluster.bootstrap, target, PARTITIONS, written)]
    twice = sorted(v for v, n in Counter(got).items() if n > 1)
    missing = sorted(set(range(written)) - set(got))
    assert not twice and not missing, f"copied twice: {twice[:20]}; missing: {missing[:20]}\n{group.report()}"
