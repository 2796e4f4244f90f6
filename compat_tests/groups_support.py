"""Helpers for the consumer-group compat tests: consumer processes, group description, waiting.

`MemberProcess` runs `compat_tests.groups_consumer` (one stock client's subscribe() consumer)
as a subprocess and collects its JSON events on a thread; `describe_group` asks the broker
through confluent-kafka's admin client (DescribeGroups); `wait_for_stable` waits until the
group is Stable with the expected members and every partition has exactly one owner, both in
the broker's description and in the consumers' own views.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient

REPO_ROOT = Path(__file__).resolve().parent.parent
GROUP_BROKER_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "200",
    "auto.create.topics.enable": "false",
    "offsets.topic.num.partitions": "50",
}


class MemberProcess:
    """One consumer process in a group."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str, *extra: str, name: str = "") -> None:
        self.client = client
        self.name = name or client
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "compat_tests.groups_consumer", client, bootstrap, group, topic, *extra],
            cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self.events.append(event)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line.decode(errors="replace"))
            del self._stderr[:-50]

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events)

    def assignment(self) -> set[int]:
        parts: set[int] = set()
        for e in self.snapshot():
            if e["ev"] == "assigned":
                parts = set(e["parts"])
        return parts

    def records(self) -> set[tuple[int, int]]:
        return {(e["p"], e["o"]) for e in self.snapshot() if e["ev"] == "rec"}

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.snapshot() if e["ev"] == kind]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: gone without leaving the group."""
        if self.alive:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM: commit, leave the group and close."""
        if self.alive:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError(f"{self.name} did not close within {timeout}s\n{self.stderr()}") from None

    def stderr(self) -> str:
        return "".join(self._stderr[-30:])

    def __repr__(self) -> str:
        return f"<{self.name} alive={self.alive} assignment={sorted(self.assignment())}>"


@dataclass
class GroupView:
    state: str
    assignments: list[frozenset[int]]
    protocol: str


def describe_group(bootstrap: str, group: str, timeout: float = 15.0) -> GroupView:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    desc = admin.describe_consumer_groups([group], request_timeout=timeout)[group].result(timeout)
    state = desc.state.name if isinstance(desc.state, ConsumerGroupState) else str(desc.state)
    assignments = [frozenset(tp.partition for tp in m.assignment.topic_partitions) for m in desc.members]
    return GroupView(state, assignments, desc.partition_assignor)


def exactly_one_owner(assignments: list[set[int]] | list[frozenset[int]], partitions: int) -> bool:
    owned = [p for a in assignments for p in a]
    return sorted(owned) == list(range(partitions))


def wait_for_stable(bootstrap: str, group: str, members: list[MemberProcess], partitions: int,
                    timeout: float = 40.0) -> GroupView:
    """Wait until the group is Stable with exactly ``members`` and each partition has one owner.

    Checked on both sides: the broker's DescribeGroups and the consumers' own assignments.
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        for m in members:
            assert m.alive, f"{m.name} exited\n{m.stderr()}"
        try:
            view = describe_group(bootstrap, group)
        except Exception as e:  # noqa: BLE001 - keep polling; the last problem is reported on timeout
            last = e
            time.sleep(0.3)
            continue
        mine = [frozenset(m.assignment()) for m in members]
        last = (view, mine)
        if (view.state == "STABLE" and len(view.assignments) == len(members)
                and exactly_one_owner(view.assignments, partitions)
                and exactly_one_owner(mine, partitions)
                and sorted(map(sorted, view.assignments)) == sorted(map(sorted, mine))):
            return view
        time.sleep(0.3)
    raise AssertionError(f"group {group} not stable with {len(members)} members within {timeout}s: {last}\n"
                         + "\n".join(f"{m!r}\n{m.stderr()}" for m in members))


def wait_until(predicate: Any, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(message() if callable(message) else message)


def produce_spread(bootstrap: str, topic: str, count: int, partitions: int, tag: str = "r") -> None:
    """Produce ``count`` records spread evenly over the partitions, all acknowledged."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "message.timeout.ms": 30000})
    failures: list[Any] = []

    def cb(err: Any, msg: Any) -> None:
        if err is not None:
            failures.append(err)

    for i in range(count):
        p.produce(topic, value=f"{tag}-{i}".encode(), partition=i % partitions, on_delivery=cb)
    assert p.flush(30) == 0, "records still unacknowledged after 30s"
    assert not failures, failures


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "offsets-probe", "enable.auto.commit": False})
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1] for p in range(partitions)}
    finally:
        c.close()


def all_offsets(ends: dict[int, int]) -> set[tuple[int, int]]:
    return {(p, o) for p, end in ends.items() for o in range(end)}
