"""The server-side partition assignors of consumer-protocol groups (KIP-848): ``uniform`` and ``range``,
chosen by ``group.consumer.assignors`` and by each member's ``server_assignor``.

An assignor maps the group's members (what each subscribes to) and the subscribed topics (their
partition counts) to a target assignment, given the previous target.  ``uniform`` spreads every
partition over the members that subscribe to its topic as evenly as possible and moves as few
partitions as it can from the previous target (sticky); ``range`` gives each subscriber of a topic
one contiguous range of its partitions, the same ranges to the same members across topics of equal
size (co-partitioning), as Kafka's server-side RangeAssignor does.  Both are pure functions.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

# topic id -> partition indexes.
Assignment = dict[uuid.UUID, set[int]]

Assignor = Callable[[Mapping[str, frozenset[uuid.UUID]], Mapping[uuid.UUID, int], Mapping[str, Assignment]],
                    dict[str, Assignment]]


def _empty(members: Mapping[str, frozenset[uuid.UUID]]) -> dict[str, Assignment]:
    return {member_id: {} for member_id in members}


def uniform(members: Mapping[str, frozenset[uuid.UUID]], topics: Mapping[uuid.UUID, int],
            previous: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """Every partition of ``topics`` (topic id -> partition count, in a stable order) to one member
    that subscribes to its topic; member loads differ by at most one where subscriptions allow,
    and partitions stay where ``previous`` had them unless balance needs them elsewhere."""
    owner: dict[tuple[uuid.UUID, int], str] = {}
    load = dict.fromkeys(members, 0)
    # Sticky: what each member had and still may have, taken up front (balance is restored below).
    for member_id in sorted(members):
        for topic_id, partitions in previous.get(member_id, {}).items():
            if topic_id not in members[member_id] or topic_id not in topics:
                continue
            for p in sorted(partitions):
                if p < topics[topic_id] and (topic_id, p) not in owner:
                    owner[(topic_id, p)] = member_id
                    load[member_id] += 1
    subscribers = {t: sorted(m for m, subs in members.items() if t in subs) for t in topics}
    for topic_id, count in topics.items():
        for p in range(count):
            if (topic_id, p) in owner or not subscribers[topic_id]:
                continue
            chosen = min(subscribers[topic_id], key=lambda m: (load[m], m))
            owner[(topic_id, p)] = chosen
            load[chosen] += 1
    _balance(owner, load, subscribers)
    result = _empty(members)
    for (topic_id, p), member_id in owner.items():
        result[member_id].setdefault(topic_id, set()).add(p)
    return result


def _balance(owner: dict[tuple[uuid.UUID, int], str], load: dict[str, int],
             subscribers: Mapping[uuid.UUID, list[str]]) -> None:
    """Move partitions from the most to the least loaded member that may take them until no move
    lowers the spread; each move shrinks the gap, so this ends."""
    by_member: dict[str, list[tuple[uuid.UUID, int]]] = {m: [] for m in load}
    for tp, m in sorted(owner.items(), key=lambda item: (str(item[0][0]), item[0][1])):
        by_member[m].append(tp)
    moved = True
    while moved:
        moved = False
        for giver in sorted(load, key=lambda m: (-load[m], m)):
            for tp in reversed(by_member[giver]):
                taker = min(subscribers[tp[0]], key=lambda m: (load[m], m))
                if load[taker] + 1 < load[giver]:
                    by_member[giver].remove(tp)
                    by_member[taker].append(tp)
                    owner[tp] = taker
                    load[giver] -= 1
                    load[taker] += 1
                    moved = True
                    break
            if moved:
                break


def range_(members: Mapping[str, frozenset[uuid.UUID]], topics: Mapping[uuid.UUID, int],
           previous: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """Per topic, its subscribers in member id order each get one contiguous range: ``count // n``
    partitions, one more for the first ``count % n``."""
    result = _empty(members)
    for topic_id, count in topics.items():
        subscribed = sorted(m for m, subs in members.items() if topic_id in subs)
        if not subscribed:
            continue
        quota, extra = divmod(count, len(subscribed))
        start = 0
        for i, member_id in enumerate(subscribed):
            size = quota + (1 if i < extra else 0)
            if size:
                result[member_id][topic_id] = set(range(start, start + size))
            start += size
    return result


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
