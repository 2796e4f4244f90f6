"""Where a new partition's replicas go: Kafka's assignment, with racks when brokers have them.

Kafka's ``AdminUtils.assignReplicasToBrokers``.  Rack-unaware: the first replica of each partition
goes round-robin over the sorted brokers from a random start; each following replica is shifted
from the first by an amount that changes once per full round, so replicas of consecutive
partitions do not land on the same pairs of brokers.  Rack-aware (when any broker has a
``broker.rack``): the same walk over the brokers listed rack by rack in turn, skipping a broker
whose rack (or itself) already holds a replica of the partition while some rack (or broker) holds
none, so a partition's replicas span as many racks as they can.  Brokers without a rack count as
one rack of their own.  Adding partitions continues from the topic's current count, as Kafka does
for CreatePartitions.
"""

from __future__ import annotations

import random
from collections.abc import Collection

NO_RACK = ""


def assign_replicas(brokers: list[int], partitions: int, replication_factor: int, first_partition: int = 0,
                    start_index: int | None = None, shift: int | None = None,
                    racks: dict[int, str | None] | None = None) -> list[list[int]]:
    """Replica lists for partitions ``first_partition`` .. ``first_partition + partitions - 1``."""
    count = len(brokers)
    if not 0 < replication_factor <= count:
        raise ValueError(f"replication factor {replication_factor} with {count} broker(s)")
    rack_of = {b: (racks or {}).get(b) or NO_RACK for b in brokers}
    rack_aware = any(rack_of.values())
    ordered = rack_alternated(rack_of) if rack_aware else sorted(brokers)
    rack_count = len(set(rack_of.values()))
    start = random.randrange(count) if start_index is None else start_index
    next_shift = (random.randrange(count) if start_index is None else start_index) if shift is None else shift
    result = []
    for current in range(first_partition, first_partition + partitions):
        if current > 0 and current % count == 0:
            next_shift += 1
        first = (current + start) % count
        replicas = [ordered[first]]
        if not rack_aware:
            replicas += [ordered[_replica_index(first, next_shift, j, count)] for j in range(replication_factor - 1)]
        else:
            used_racks = {rack_of[replicas[0]]}
            k = 0
            while len(replicas) < replication_factor:
                broker = ordered[_replica_index(first, next_shift * rack_count, k, count)]
                k += 1
                rack = rack_of[broker]
                if ((rack not in used_racks or len(used_racks) == rack_count)
                        and (broker not in replicas or len(replicas) == count)):
                    replicas.append(broker)
                    used_racks.add(rack)
        result.append(replicas)
    return result


def rack_alternated(rack_of: dict[int, str]) -> list[int]:
    """The brokers listed one per rack in turn (racks in name order, brokers by id within a rack)."""
    by_rack: dict[str, list[int]] = {}
    for broker in sorted(rack_of):
        by_rack.setdefault(rack_of[broker], []).append(broker)
    queues = [by_rack[r] for r in sorted(by_rack)]
    out: list[int] = []
    depth = 0
    while len(out) < len(rack_of):
        out += [q[depth] for q in queues if depth < len(q)]
        depth += 1
    return out


def _replica_index(first: int, shift: int, replica: int, count: int) -> int:
    step = 1 + (shift + replica) % (count - 1)
    return (first + step) % count


def manual_assignment_problem(replicas: list[int], registered: Collection[int]) -> str | None:
    """Kafka's check of one partition's replicas given by hand (CreatePartitions, a reassignment):
    its message for an empty list, an unregistered broker or a broker named twice (brokers taken
    in ascending order), or None."""
    if not replicas:
        return "The manual partition assignment includes an empty replica list."
    previous = None
    for broker_id in sorted(replicas):
        if broker_id not in registered:
            return f"The manual partition assignment includes broker {broker_id}, but no such broker is registered."
        if broker_id == previous:
            return f"The manual partition assignment includes the broker {previous} more than once."
        previous = broker_id
    return None
