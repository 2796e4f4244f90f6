"""The controller's decision for one partition when brokers come and go (Kafka's partition state machine).

Given the partition's replicas, leader and ISR and the brokers alive now:
- a leader that is alive keeps leading; followers that died leave the ISR (a new leader epoch);
- a dead leader is replaced by the first replica, in assignment order, that is alive and in the
  ISR (Kafka's offline partition election), with the dead ones removed from the ISR;
- with no such replica the partition is offline: leader -1 and a new epoch, the ISR kept as it
  was, so that the last in-sync replica is the one that may lead when it returns (Kafka without
  ``unclean.leader.election.enable``).  An offline partition whose ISR member returns is led by it.
"""

from __future__ import annotations

from pykafkad.metadata.model import NO_LEADER, PartitionInfo
from pykafkad.metadata.znodes import PartitionState


def next_state(partition: PartitionInfo, live: set[int], controller_epoch: int) -> PartitionState | None:
    """The state the partition should move to, or None when it is right as it is."""
    if partition.state_version < 0:
        return None  # no state yet: the topic's creation writes it
    live_isr = [r for r in partition.isr if r in live]
    epoch = partition.leader_epoch + 1
    if partition.leader in live:
        if live_isr != partition.isr:
            return PartitionState(partition.leader, epoch, live_isr, controller_epoch)
        return None
    candidates = [r for r in partition.replicas if r in live_isr]
    if candidates:
        return PartitionState(candidates[0], epoch, live_isr, controller_epoch)
    if partition.leader != NO_LEADER:
        return PartitionState(NO_LEADER, epoch, list(partition.isr), controller_epoch)
    return None
