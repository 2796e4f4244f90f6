"""A seeded fault schedule: which fault, against which role, for how long, and the quiet gap after it.

The same seed gives the same schedule (the kinds, roles, hold times and gaps); which broker holds a
role (the controller, a leader, a coordinator) is looked up when the fault is injected.  A schedule
first goes through every kind once, in an order the seed shuffles, so even a short run injects each
kind at least once; after that, kinds are drawn at random.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Cluster faults, and what each may be aimed at.
BROKER_ROLES = ("controller", "leader", "follower", "group-coordinator", "txn-coordinator", "any")
CLUSTER_KINDS = {
    "kill": (*BROKER_ROLES, "zookeeper"),
    "pause": (*BROKER_ROLES, "zookeeper"),
    "isolate": BROKER_ROLES,             # a broker cut from the other brokers
    "cut-zookeeper": BROKER_ROLES,       # a broker cut from ZooKeeper, shorter than its session
    "expire-session": BROKER_ROLES,      # a broker cut from ZooKeeper until its session expires
    "split": ("any",),                   # a majority/minority split of brokers and ZooKeeper
    "one-way": ("leader", "follower"),   # what the broker sends to one other broker is lost
    "lossy": BROKER_ROLES,               # 20% of the broker's cluster packets dropped
    "slow": BROKER_ROLES,                # the broker's link delayed
    "disk-full": BROKER_ROLES,           # the broker's log dir filled up
}
# Faults of the clients: a group member crashed (SIGKILL) or leaving cleanly, then started again.
MEMBER_KINDS = ("crash-member", "stop-member")
# What needs ZooKeeper (left out against Kafka in KRaft mode).
ZOOKEEPER_ONLY = ("cut-zookeeper", "expire-session", "zookeeper")


@dataclass(frozen=True)
class Step:
    at_s: float       # when to inject, from the start of the schedule
    kind: str
    target: str       # a role (CLUSTER_KINDS) or a member name
    hold_s: float     # how long the fault lasts before it heals


def cluster_schedule(seed: int, duration_s: float, zookeeper: bool, session_timeout_s: float) -> list[Step]:
    rng = random.Random(seed)
    kinds = [k for k in CLUSTER_KINDS if zookeeper or k not in ZOOKEEPER_ONLY]
    first = kinds[:]
    rng.shuffle(first)
    steps: list[Step] = []
    t = 5.0
    while t < duration_s:
        kind = first.pop() if first else rng.choice(kinds)
        roles = [r for r in CLUSTER_KINDS[kind] if zookeeper or r not in ZOOKEEPER_ONLY]
        hold = (session_timeout_s * 2 + 2) if kind == "expire-session" else rng.uniform(3, 12)
        if kind == "cut-zookeeper":
            hold = min(hold, session_timeout_s / 3)
        steps.append(Step(round(t, 1), kind, rng.choice(roles), round(hold, 1)))
        t += hold + rng.uniform(3, 8)
    return steps


def member_schedule(seed: int, duration_s: float, members: list[str]) -> list[Step]:
    rng = random.Random(seed * 7919 + 1)
    steps: list[Step] = []
    t = 10.0
    first = list(MEMBER_KINDS)
    while t < duration_s:
        kind = first.pop() if first else rng.choice(MEMBER_KINDS)
        hold = rng.uniform(2, 10)
        steps.append(Step(round(t, 1), kind, rng.choice(members), round(hold, 1)))
        t += hold + rng.uniform(5, 15)
    return steps
