"""The server-side assignors of consumer-protocol groups: balance, stickiness and ranges."""

from __future__ import annotations

import uuid

from pykafkad.coordinator.group.assignors import range_, uniform

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def _count(assignment: dict[uuid.UUID, set[int]]) -> int:
    return sum(len(ps) for ps in assignment.values())


def _every_partition_once(result: dict[str, dict[uuid.UUID, set[int]]], topics: dict[uuid.UUID, int]) -> None:
    owned = [(t, p) for a in result.values() for t, ps in a.items() for p in ps]
    assert sorted(owned) == sorted((t, p) for t, n in topics.items() for p in range(n))


def test_uniform_spreads_evenly() -> None:
    topics = {T1: 7, T2: 3}
    members = {m: frozenset({T1, T2}) for m in ("a", "b", "c")}
    result = uniform(members, topics, {})
    _every_partition_once(result, topics)
    assert sorted(_count(a) for a in result.values()) == [3, 3, 4]


def test_uniform_is_sticky_when_a_member_joins() -> None:
    topics = {T1: 6}
    before = uniform({"a": frozenset({T1}), "b": frozenset({T1})}, topics, {})
    after = uniform({"a": frozenset({T1}), "b": frozenset({T1}), "c": frozenset({T1})}, topics, before)
    _every_partition_once(after, topics)
    assert [_count(after[m]) for m in "abc"] == [2, 2, 2]
    # a and b only gave partitions up; they took none they did not have.
    for m in "ab":
        assert after[m][T1] <= before[m][T1]


def test_uniform_respects_subscriptions() -> None:
    topics = {T1: 4, T2: 4}
    result = uniform({"a": frozenset({T1}), "b": frozenset({T1, T2})}, topics, {})
    _every_partition_once(result, topics)
    assert set(result["a"]) == {T1}
    assert result["b"][T2] == {0, 1, 2, 3}


def test_range_gives_contiguous_ranges_the_first_members_one_more() -> None:
    topics = {T1: 5, T2: 5}
    result = range_({m: frozenset({T1, T2}) for m in ("b", "a")}, topics, {})
    assert result["a"] == {T1: {0, 1, 2}, T2: {0, 1, 2}}
    assert result["b"] == {T1: {3, 4}, T2: {3, 4}}
