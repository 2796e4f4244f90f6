"""Reconciliation of one consumer-protocol member towards its target assignment (KIP-848), as Kafka's
CurrentAssignmentBuilder does it: a partition is revoked from its old owner before it is given to
a new one.

A member whose current partitions include some the target moves elsewhere keeps its member epoch and
is asked to revoke them (UNREVOKED_PARTITIONS); once its heartbeat no longer reports them it moves
to the next epoch.  Partitions of its target still owned by another member are held back until
that member lets go (UNRELEASED_PARTITIONS).  Otherwise the member takes the target's epoch and
partitions (STABLE).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace

from pykafkad.coordinator.group.assignors import Assignment
from pykafkad.coordinator.group.consumer_member import ConsumerMember, MemberState, copy_assignment

# Whether another member owns a partition now.
OwnedElsewhere = Callable[[uuid.UUID, int], bool]


def _still_owns(owned: Assignment | None, revoking: Assignment) -> bool:
    """Whether the partitions the member reports still include one it must revoke (a heartbeat that
    reports nothing is taken as still owning them)."""
    if owned is None:
        return True
    return any(p in revoking.get(t, ()) for t, ps in owned.items() for p in ps)


def reconcile(member: ConsumerMember, target_epoch: int, target: Assignment, owned_elsewhere: OwnedElsewhere,
              reported: Assignment | None) -> ConsumerMember:
    """The member's next state; ``reported`` is what its heartbeat says it owns (None: not sent)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(member, member.member_epoch, target_epoch, target, owned_elsewhere, reported)
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        if _still_owns(reported, member.pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, target_epoch, target, owned_elsewhere, reported)
    return _next(member, member.member_epoch, target_epoch, target, owned_elsewhere, reported)


def _with_epoch(member: ConsumerMember, epoch: int) -> tuple[int, int]:
    """(member epoch, previous member epoch) after a reconciliation step: the previous epoch is the
    one the member had before this step, even when the step keeps it (Kafka's updateMemberEpoch)."""
    return epoch, member.member_epoch


def _next(member: ConsumerMember, epoch: int, target_epoch: int, target: Assignment,
          owned_elsewhere: OwnedElsewhere, reported: Assignment | None) -> ConsumerMember:
    assigned: Assignment = {}
    revoking: Assignment = {}
    pending: Assignment = {}
    unreleased = False
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, set())
        current = member.assigned.get(topic_id, set())
        keep = current & wanted
        if keep:
            assigned[topic_id] = set(keep)
        if current - keep:
            revoking[topic_id] = current - keep
        free = set()
        for p in wanted - keep:
            if owned_elsewhere(topic_id, p):
                unreleased = True
            else:
                free.add(p)
        if free:
            pending[topic_id] = free
    if revoking and _still_owns(reported, revoking):
        member_epoch, previous = _with_epoch(member, epoch)
        return replace(member, state=MemberState.UNREVOKED_PARTITIONS, member_epoch=member_epoch,
                       previous_member_epoch=previous, assigned=assigned, pending_revocation=revoking)
    for topic_id, ps in pending.items():
        assigned.setdefault(topic_id, set()).update(ps)
    member_epoch, previous = _with_epoch(member, target_epoch)
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return replace(member, state=state, member_epoch=member_epoch, previous_member_epoch=previous,
                   assigned=copy_assignment(assigned), pending_revocation={})
