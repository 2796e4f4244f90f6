"""The server-side assignor of share groups (KIP-932): Kafka 4.4's ``simple`` assignor.

Share-group members do not own partitions: several members may fetch from one partition, each
record going to one of them.  So with more members than partitions a partition is shared, and the
assignor aims at every partition having ``ceil(members / partitions)`` members (its desired
sharing) and every member a quota of partitions that adds up to that, the quotas differing by at
most one.  It is sticky: a member keeps the partitions of its previous target while that respects
its quota and the partition's sharing.  With heterogeneous subscriptions the same is done topic by
topic, among the members that subscribe to it.

Which member gets which partition follows Kafka's iteration order of member ids (a Java HashMap),
which pykafkad does not reproduce: what is checked against Kafka is how many partitions each member
gets and how many members share each partition.  A pure function, like ``assignors``.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping

from pykafkad.coordinator.group.assignors import Assignment

TopicPartition = tuple[uuid.UUID, int]


def _quotas(members: list[str], partitions: int) -> tuple[int, dict[str, int]]:
    """The desired sharing of each partition, and each member's quota of partitions."""
    if not members or not partitions:
        return 0, dict.fromkeys(members, 0)
    sharing = math.ceil(len(members) / partitions)
    per_member = sharing * partitions / len(members)
    return sharing, {m: math.ceil(per_member * (i + 1)) - math.ceil(per_member * i) for i, m in enumerate(members)}


def _assign(members: list[str], partitions: list[TopicPartition],
            previous: Mapping[str, Assignment]) -> dict[str, set[TopicPartition]]:
    """One homogeneous set: ``members`` all subscribe to every one of ``partitions``."""
    sharing, quota = _quotas(members, len(partitions))
    assigned: dict[str, set[TopicPartition]] = {m: set() for m in members}
    holders: dict[TopicPartition, set[str]] = {tp: set() for tp in partitions}
    # Sticky: what each member had, as far as its quota and each partition's sharing allow.
    for m in members:
        kept = sorted(tp for tp in ((t, p) for t, ps in previous.get(m, {}).items() for p in ps) if tp in holders)
        for tp in kept:
            if len(assigned[m]) < quota[m] and len(holders[tp]) < sharing:
                assigned[m].add(tp)
                holders[tp].add(m)
    # The rest: the least shared partitions first, to the members furthest below their quota.
    while True:
        wanting = [m for m in members if len(assigned[m]) < quota[m]]
        if not wanting:
            break
        open_partitions = [tp for tp in partitions if len(holders[tp]) < sharing]
        if not open_partitions:
            break
        member = max(wanting, key=lambda m: (quota[m] - len(assigned[m]), -members.index(m)))
        choices = [tp for tp in open_partitions if member not in holders[tp]]
        if not choices:
            quota[member] = len(assigned[member])  # nothing it can take: its quota is what it has
            continue
        tp = min(choices, key=lambda t: (len(holders[t]), t[0].bytes, t[1]))
        assigned[member].add(tp)
        holders[tp].add(member)
    return assigned


def simple(members: Mapping[str, frozenset[uuid.UUID]], topics: Mapping[uuid.UUID, int],
           previous: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """Each member's share of the assignable partitions (``topics``: topic id -> partition count)."""
    ordered = sorted(members)
    result: dict[str, Assignment] = {m: {} for m in ordered}
    homogeneous = len({members[m] for m in ordered}) <= 1
    groups: list[tuple[list[str], list[TopicPartition]]] = []
    if homogeneous:
        subscribed = next(iter(members.values()), frozenset())
        groups.append((ordered, [(t, p) for t in sorted(topics, key=lambda t: t.bytes) if t in subscribed
                                 for p in range(topics[t])]))
    else:
        for t in sorted(topics, key=lambda t: t.bytes):
            groups.append(([m for m in ordered if t in members[m]], [(t, p) for p in range(topics[t])]))
    for group_members, partitions in groups:
        for m, tps in _assign(group_members, partitions, previous).items():
            for t, p in tps:
                result[m].setdefault(t, set()).add(p)
    return result
