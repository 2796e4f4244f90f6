"""Unit tests of the controller's leader choices (``partition_leadership``); the cluster tests prove
the same decisions on real brokers."""

from __future__ import annotations

from pykafkad.controller.partition_leadership import next_state, preferred_leader_state, unclean_leader_state
from pykafkad.metadata.model import PartitionInfo
from pykafkad.metadata.znodes import PartitionState


def partition(leader: int, isr: list[int], replicas: list[int] | None = None, epoch: int = 4) -> PartitionInfo:
    return PartitionInfo(0, leader, epoch, replicas or [1, 2, 3], isr, controller_epoch=1, state_version=7)


def test_a_live_leader_keeps_leading_and_dead_followers_leave_the_isr() -> None:
    assert next_state(partition(1, [1, 2, 3]), {1, 2, 3}, 2) is None
    assert next_state(partition(1, [1, 2, 3]), {1, 3}, 2) == PartitionState(1, 5, [1, 3], 2)


def test_a_dead_leader_is_replaced_by_the_first_live_in_sync_replica_in_assignment_order() -> None:
    assert next_state(partition(1, [3, 1, 2]), {2, 3}, 2) == PartitionState(2, 5, [3, 2], 2)


def test_with_no_live_in_sync_replica_the_partition_goes_offline_unless_unclean_is_allowed() -> None:
    offline = partition(1, [1])
    assert next_state(offline, {2, 3}, 2) == PartitionState(-1, 5, [1], 2)
    assert next_state(offline, {2, 3}, 2, unclean=True) == PartitionState(2, 5, [2], 2)
    assert next_state(partition(-1, [1], epoch=5), {2, 3}, 2) is None
    assert next_state(partition(-1, [1], epoch=5), {1, 2}, 2) == PartitionState(1, 6, [1], 2)


def test_the_preferred_replica_leads_only_when_alive_and_in_sync() -> None:
    assert preferred_leader_state(partition(2, [1, 2, 3]), {1, 2, 3}, 2) == PartitionState(1, 5, [1, 2, 3], 2)
    assert preferred_leader_state(partition(2, [2, 3]), {1, 2, 3}, 2) is None
    assert preferred_leader_state(partition(2, [1, 2, 3]), {2, 3}, 2) is None


def test_an_unclean_election_prefers_in_sync_replicas_and_needs_one_alive() -> None:
    assert unclean_leader_state(partition(-1, [2, 3]), {3}, 2) == PartitionState(3, 5, [3], 2)
    assert unclean_leader_state(partition(-1, [1]), {3, 2}, 2) == PartitionState(2, 5, [2], 2)
    assert unclean_leader_state(partition(-1, [1]), set(), 2) is None


def test_a_replica_on_a_failed_log_dir_hands_its_leadership_to_an_in_sync_replica_and_leaves_the_isr() -> None:
    assert next_state(partition(1, [1, 2, 3]), {1, 2, 3}, 2, offline=frozenset({1})) == PartitionState(2, 5, [2, 3], 2)
    # A follower on a failed dir leaves the ISR; the leader keeps leading.
    assert next_state(partition(1, [1, 2, 3]), {1, 2, 3}, 2, offline=frozenset({3})) == PartitionState(1, 5, [1, 2], 2)
    # Out of the ISR already: nothing to change.
    assert next_state(partition(2, [2, 3]), {1, 2, 3}, 2, offline=frozenset({1})) is None


def test_a_replica_on_a_failed_log_dir_leads_only_when_no_other_in_sync_replica_is_alive() -> None:
    # Nobody to hand over to: it keeps the lead (reads go on), and is not taken out of the ISR.
    assert next_state(partition(1, [1]), {1, 2, 3}, 2, offline=frozenset({1})) is None
    assert next_state(partition(1, [1, 2]), {1, 3}, 2, offline=frozenset({1})) == PartitionState(1, 5, [1], 2)
    # Its leader dead, the partition is led by the in-sync replica on a failed dir rather than none.
    assert next_state(partition(2, [1, 2]), {1, 3}, 2, offline=frozenset({1})) == PartitionState(1, 5, [1], 2)
    # An online in-sync replica is preferred to one earlier in the assignment on a failed dir.
    assert next_state(partition(3, [1, 2]), {1, 2}, 2, offline=frozenset({1})) == PartitionState(2, 5, [2], 2)
