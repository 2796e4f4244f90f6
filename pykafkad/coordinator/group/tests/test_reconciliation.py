"""A consumer-protocol member's reconciliation: revoke before another member is assigned."""

from __future__ import annotations

import uuid

from pykafkad.coordinator.group.consumer_member import ConsumerMember, MemberState
from pykafkad.coordinator.group.reconciliation import reconcile

T = uuid.UUID(int=1)


def _nobody(topic_id: uuid.UUID, partition: int) -> bool:
    return False


def test_a_member_keeps_its_epoch_until_it_revokes() -> None:
    member = ConsumerMember("m", member_epoch=3, assigned={T: {0, 1, 2, 3}})
    asked = reconcile(member, 4, {T: {0, 1}}, _nobody, None)
    assert (asked.state, asked.member_epoch) == (MemberState.UNREVOKED_PARTITIONS, 3)
    assert asked.assigned == {T: {0, 1}} and asked.pending_revocation == {T: {2, 3}}
    still = reconcile(asked, 4, {T: {0, 1}}, _nobody, {T: {0, 1, 2, 3}})
    assert still is asked
    done = reconcile(asked, 4, {T: {0, 1}}, _nobody, {T: {0, 1}})
    assert (done.state, done.member_epoch, done.previous_member_epoch) == (MemberState.STABLE, 4, 3)
    assert done.pending_revocation == {}


def test_partitions_still_owned_elsewhere_wait() -> None:
    member = ConsumerMember("m", member_epoch=3, assigned={})
    waiting = reconcile(member, 4, {T: {2, 3}}, lambda t, p: p == 3, None)
    assert (waiting.state, waiting.member_epoch) == (MemberState.UNRELEASED_PARTITIONS, 4)
    assert waiting.assigned == {T: {2}}
    released = reconcile(waiting, 4, {T: {2, 3}}, _nobody, {T: {2}})
    assert (released.state, released.assigned) == (MemberState.STABLE, {T: {2, 3}})


def test_a_heartbeat_that_already_dropped_the_partitions_skips_the_revocation() -> None:
    member = ConsumerMember("m", member_epoch=3, assigned={T: {0, 1}})
    moved = reconcile(member, 5, {T: {0}}, _nobody, {T: {0}})
    assert (moved.state, moved.member_epoch, moved.assigned) == (MemberState.STABLE, 5, {T: {0}})
