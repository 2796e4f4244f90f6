"""The nemesis: turns a schedule's step into a fault on the running cluster, and heals it.

A role (the controller, a workload partition's leader or follower, the group or transaction
coordinator) is resolved to a broker when the step starts, from the cluster's own metadata: the
``/controller`` znode, and Metadata for the partition that holds a group's or transactional id's
state (Kafka's ``abs(id.hashCode()) % partitions``).  Every fault is recorded in the history with the
node it hit, when it was injected and when it healed.  Healing a fault also starts again any node
that is not running (a killed node, or a Kafka broker that halted on a full disk, as an operator
would), and records that.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka.admin import AdminClient

from cluster_tests.faults.history import History
from cluster_tests.faults.network import Network
from cluster_tests.faults.nodes import Broker, Process
from cluster_tests.faults.schedule import Step

CONSUMER_OFFSETS_PARTITIONS = 50
TRANSACTION_STATE_PARTITIONS = 50


def java_hash(s: str) -> int:
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def state_partition(key: str, partitions: int) -> int:
    # Kafka's Utils.abs: Integer.MIN_VALUE maps to 0, not to a negative number.
    return (java_hash(key) & 0x7FFFFFFF) % partitions


class Nemesis:
    def __init__(self, network: Network, brokers: dict[str, Broker], zookeeper: Process | None,
                 history: History, bootstrap: Callable[[], str], rng: random.Random, *,
                 topic: str, group: str, transactional_id: str, controller: Callable[[], int | None]) -> None:
        self.network = network
        self.brokers = brokers
        self.zookeeper = zookeeper
        self.history = history
        self.bootstrap = bootstrap
        self.rng = rng
        self.topic, self.group, self.transactional_id = topic, group, transactional_id
        self.controller = controller
        self.injected: list[dict[str, Any]] = []
        self.restarts: list[str] = []
        self._lock = threading.Lock()

    # -- roles -------------------------------------------------------------------------------------

    def _metadata(self) -> Any:
        admin = AdminClient({"bootstrap.servers": self.bootstrap(), "socket.timeout.ms": 5000})
        return admin.list_topics(timeout=5)

    def resolve(self, role: str) -> str:
        """The node a role names now (a random live broker when it cannot be told)."""
        live = [n for n, b in self.brokers.items() if b.alive() and not b.paused]
        fallback = self.rng.choice(live or list(self.brokers))
        try:
            if role == "zookeeper" and self.zookeeper is not None:
                return "zk"
            if role == "controller":
                node = self.controller()
                return f"b{node}" if node is not None and f"b{node}" in self.brokers else fallback
            if role in ("leader", "follower", "group-coordinator", "txn-coordinator"):
                md = self._metadata()
                if role == "group-coordinator":
                    parts = md.topics["__consumer_offsets"].partitions
                    part = parts[state_partition(self.group, len(parts))]
                elif role == "txn-coordinator":
                    parts = md.topics["__transaction_state"].partitions
                    part = parts[state_partition(self.transactional_id, len(parts))]
                else:
                    parts = md.topics[self.topic].partitions
                    part = parts[self.rng.choice(sorted(parts))]
                if role == "follower":
                    followers = [r for r in part.replicas if r != part.leader]
                    return f"b{self.rng.choice(followers)}" if followers else fallback
                return f"b{part.leader}" if part.leader >= 0 else fallback
        except Exception as e:  # noqa: BLE001 - metadata unavailable mid-fault: any broker will do
            self.history.record("note", "nemesis", text=f"role {role} not resolved: {e}")
        return fallback

    # -- faults ------------------------------------------------------------------------------------

    def _node(self, name: str) -> Process:
        return self.zookeeper if name == "zk" and self.zookeeper is not None else self.brokers[name]

    def inject(self, step: Step) -> Callable[[], None]:
        """Start the step's fault; returns what heals it."""
        node = self.resolve(step.target)
        names = list(self.brokers)
        detail = ""
        heal: Callable[[], None] = self.network.heal
        if step.kind == "kill":
            self._node(node).kill9()
            heal = lambda: None  # noqa: E731 - heal_all restarts it
        elif step.kind == "pause":
            self._node(node).pause()
            heal = self._node(node).resume
        elif step.kind == "isolate":
            for other in names:
                if other != node:
                    self.network.cut(node, other)
        elif step.kind in ("cut-zookeeper", "expire-session"):
            self.network.cut(node, "zk")
        elif step.kind == "split":
            everyone = [*names, *(["zk"] if self.zookeeper is not None else [])]
            self.rng.shuffle(everyone)
            size = self.rng.choice([1, len(everyone) // 2])
            minority, majority = everyone[:size], everyone[size:]
            for a in minority:
                for b in majority:
                    self.network.cut(a, b)
            node = "+".join(sorted(minority))
            detail = f"{sorted(minority)} | {sorted(majority)}"
        elif step.kind == "one-way":
            other = self.rng.choice([n for n in names if n != node])
            self.network.cut_one_way(node, other)
            detail = f"{node} -> {other} lost"
        elif step.kind == "lossy":
            self.network.lossy(node, 20)
            detail = "20% loss"
        elif step.kind == "slow":
            detail = self.network.slow(node)
        elif step.kind == "disk-full":
            broker = self.brokers[node]
            written = broker.data.fill()
            detail = f"{written // (1 << 20)} MiB ballast"
            heal = broker.data.free
        else:
            raise ValueError(f"unknown fault {step.kind}")
        fault = {"fault": step.kind, "role": step.target, "node": node, "detail": detail, "hold_s": step.hold_s}
        with self._lock:
            self.injected.append(fault)
        self.history.record("fault", "nemesis", **fault)
        return heal

    def heal_all(self, heal: Callable[[], None]) -> None:
        heal()
        self.network.heal()
        for broker in self.brokers.values():
            broker.data.free()
        for node in [*([self.zookeeper] if self.zookeeper else []), *self.brokers.values()]:
            node.resume()
            if not node.alive():
                if node.starts and node.proc is not None and node.proc.returncode not in (-9, None):
                    self.history.record("note", "nemesis",
                                        text=f"{node.name} had exited by itself (code {node.proc.returncode})")
                    self.restarts.append(f"{node.name} exited with {node.proc.returncode}")
                node.start(wait=True)
        self.history.record("healed", "nemesis")

    def run(self, steps: list[Step], started: float, stop: threading.Event) -> None:
        for step in steps:
            if stop.wait(max(0.0, started + step.at_s - time.monotonic())):
                return
            try:
                heal = self.inject(step)
            except Exception as e:  # noqa: BLE001 - a fault that could not be made is reported, not fatal
                self.history.record("note", "nemesis", text=f"{step.kind} not injected: {e}")
                heal = self.network.heal
            stop.wait(step.hold_s)
            self.heal_all(heal)

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.injected:
            counts[f["fault"]] = counts.get(f["fault"], 0) + 1
        return counts

