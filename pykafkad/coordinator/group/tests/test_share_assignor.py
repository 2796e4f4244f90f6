"""The share groups' ``simple`` assignor: the counts Kafka 4.4's SimpleAssignor gives (how many
partitions per member, how many members per partition), stickiness, heterogeneous subscriptions."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from pykafkad.coordinator.group.share_assignor import simple

T, U = uuid.UUID(int=1), uuid.UUID(int=2)


def _members(n: int, topics: frozenset[uuid.UUID] = frozenset({T})) -> dict[str, frozenset[uuid.UUID]]:
    return {f"m{i}": topics for i in range(n)}


def _counts(result: dict) -> tuple[list[int], Counter]:
    per_member = sorted((sum(len(ps) for ps in a.values()) for a in result.values()), reverse=True)
    sharing = Counter((t, p) for a in result.values() for t, ps in a.items() for p in ps)
    return per_member, sharing


@pytest.mark.parametrize(("members", "partitions", "per_member", "sharing"), [
    (2, 5, [3, 2], 1), (3, 2, [2, 1, 1], 2), (4, 2, [1, 1, 1, 1], 2), (5, 2, [2, 1, 1, 1, 1], 3),
    (1, 4, [4], 1), (4, 4, [1, 1, 1, 1], 1), (7, 3, [2, 2, 1, 1, 1, 1, 1], 3),
])
def test_counts_as_kafka(members: int, partitions: int, per_member: list[int], sharing: int) -> None:
    got, shared = _counts(simple(_members(members), {T: partitions}, {}))
    assert got == per_member
    assert set(shared.values()) == {sharing} and len(shared) == partitions


def test_no_partitions_and_no_members() -> None:
    assert simple(_members(2), {}, {}) == {"m0": {}, "m1": {}}
    assert simple({}, {T: 3}, {}) == {}


def test_sticky_when_a_member_joins() -> None:
    before = simple(_members(2), {T: 6}, {})
    after = simple(_members(3), {T: 6}, before)
    kept = sum(len(before[m][T] & after[m].get(T, set())) for m in ("m0", "m1"))
    assert kept == 4 and _counts(after)[0] == [2, 2, 2]


def test_heterogeneous_subscriptions_topic_by_topic() -> None:
    members = {"a": frozenset({T}), "b": frozenset({T, U}), "c": frozenset({U})}
    result = simple(members, {T: 2, U: 1}, {})
    assert set(result["a"]) <= {T} and set(result["c"]) <= {U}
    shared = _counts(result)[1]
    assert shared[(T, 0)] == shared[(T, 1)] == 1 and shared[(U, 0)] == 2
