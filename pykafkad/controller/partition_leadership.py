"""The controller's decision for one partition when brokers come and go (Kafka's partition state machine).

Given the partition's replicas, leader and ISR and the brokers alive now:
- a leader that is alive keeps leading; followers that died leave the ISR (a new leader epoch);
- a dead leader is replaced by the first replica, in assignment order, that is alive and in the
  ISR (Kafka's offline partition election), with the dead ones removed from the ISR;
- with no such replica the partition is offline: leader -1 and a new epoch, the ISR kept as it
  was, so that the last in-sync replica is the one that may lead when it returns.  An offline
  partition whose ISR member returns is led by it.  With ``unclean.leader.election.enable`` the
  first live replica leads instead, alone in the ISR, and what only the lost ones had is gone.

A replica its broker reports on a failed log dir (``offline``) counts as dead for this, as Kafka's
controller treats a replica on an offline dir, with one difference: when no other in-sync replica
is alive, the in-sync replica on the failed dir keeps (or takes) the lead rather than the
partition going offline, because pykafkad still serves reads from a failed dir (its writes answer
KAFKA_STORAGE_ERROR until the dir recovers).

The elections an operator asks for (ElectLeaders) are here too: the preferred one hands
leadership back to the first assigned replica when it is alive and in sync; the unclean one
leads an offline partition from any live replica.
"""

from __future__ import annotations

from pykafkad.metadata.model import NO_LEADER, PartitionInfo
from pykafkad.metadata.znodes import PartitionState


def next_state(partition: PartitionInfo, live: set[int], controller_epoch: int,
               unclean: bool = False, offline: frozenset[int] = frozenset()) -> PartitionState | None:
    """The state the partition should move to, or None when it is right as it is.  ``offline``: the
    brokers whose replica of it is on a failed log dir."""
    if partition.state_version < 0:
        return None  # no state yet: the topic's creation writes it
    epoch = partition.leader_epoch + 1
    if offline:
        online = live - offline
        online_isr = [r for r in partition.isr if r in online]
        if partition.leader in online:
            if online_isr != partition.isr:
                return PartitionState(partition.leader, epoch, online_isr, controller_epoch)
            return None
        candidates = [r for r in partition.replicas if r in online_isr]
        if candidates:
            return PartitionState(candidates[0], epoch, online_isr, controller_epoch)
        # No in-sync replica with its log dir online: those on failed dirs still serve reads, so
        # the partition is led as if their dirs were online.
    live_isr = [r for r in partition.isr if r in live]
    if partition.leader in live:
        if live_isr != partition.isr:
            return PartitionState(partition.leader, epoch, live_isr, controller_epoch)
        return None
    candidates = [r for r in partition.replicas if r in live_isr]
    if candidates:
        return PartitionState(candidates[0], epoch, live_isr, controller_epoch)
    if unclean:
        state = unclean_leader_state(partition, live, controller_epoch)
        if state is not None:
            return state
    if partition.leader != NO_LEADER:
        return PartitionState(NO_LEADER, epoch, list(partition.isr), controller_epoch)
    return None


def preferred_leader_state(partition: PartitionInfo, live: set[int], controller_epoch: int) -> PartitionState | None:
    """The preferred replica (the first assigned) leading in a new epoch, the ISR kept; None when it is
    not alive and in sync (Kafka's PREFERRED_LEADER_NOT_AVAILABLE)."""
    preferred = partition.replicas[0] if partition.replicas else NO_LEADER
    if preferred not in live or preferred not in partition.isr:
        return None
    return PartitionState(preferred, partition.leader_epoch + 1, list(partition.isr), controller_epoch)


def unclean_leader_state(partition: PartitionInfo, live: set[int], controller_epoch: int) -> PartitionState | None:
    """A leader for a partition whose leader is gone: a live in-sync replica if there is one, else the
    first live replica alone in the ISR (records only the lost replicas had are lost); None when no
    replica is alive (Kafka's ELIGIBLE_LEADERS_NOT_AVAILABLE)."""
    epoch = partition.leader_epoch + 1
    in_sync = [r for r in partition.replicas if r in live and r in partition.isr]
    if in_sync:
        return PartitionState(in_sync[0], epoch, [r for r in partition.isr if r in live], controller_epoch)
    alive = [r for r in partition.replicas if r in live]
    if not alive:
        return None
    return PartitionState(alive[0], epoch, [alive[0]], controller_epoch)
