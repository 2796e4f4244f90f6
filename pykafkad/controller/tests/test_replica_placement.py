"""Unit tests of replica placement against the assignments Kafka's own tests expect."""

from __future__ import annotations

from pykafkad.controller.replica_placement import assign_replicas, rack_alternated

RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_brokers_are_listed_rack_by_rack_in_turn() -> None:
    assert rack_alternated(RACKS) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated({b: r for b, r in RACKS.items() if b != 5}) == [0, 3, 1, 4, 2]


def test_rack_aware_assignment_matches_kafka() -> None:
    assert assign_replicas(sorted(RACKS), 7, 3, start_index=0, racks=RACKS) == [
        [0, 3, 1], [3, 1, 5], [1, 5, 4], [5, 4, 2], [4, 2, 0], [2, 0, 3], [0, 4, 2]]


def test_every_partition_spans_both_racks_when_it_can() -> None:
    racks = {1: "a", 2: "a", 3: "b"}
    for _ in range(20):
        for replicas in assign_replicas([1, 2, 3], 6, 2, racks=racks):
            assert {racks[b] for b in replicas} == {"a", "b"}


def test_without_racks_the_assignment_is_kafkas_round_robin() -> None:
    assert assign_replicas([0, 1, 2, 3, 4], 10, 3, start_index=0, shift=0) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1], [0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2]]
