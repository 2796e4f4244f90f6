"""Where a new partition's replicas go: Kafka's assignment, without racks.

Kafka's ``AdminUtils.assignReplicasToBrokers`` (rack-unaware): the first replica of each
partition goes round-robin over the sorted brokers from a random start; each following replica is
shifted from the first by an amount that changes once per full round, so replicas of consecutive
partitions do not land on the same pairs of brokers.  Adding partitions continues from the topic's
current count, as Kafka does for CreatePartitions.
"""

from __future__ import annotations

import random


def assign_replicas(brokers: list[int], partitions: int, replication_factor: int, first_partition: int = 0,
                    start_index: int | None = None, shift: int | None = None) -> list[list[int]]:
    """Replica lists for partitions ``first_partition`` .. ``first_partition + partitions - 1``."""
    ordered = sorted(brokers)
    count = len(ordered)
    if not 0 < replication_factor <= count:
        raise ValueError(f"replication factor {replication_factor} with {count} broker(s)")
    start = random.randrange(count) if start_index is None else start_index
    next_shift = random.randrange(count) if shift is None else shift
    result = []
    for current in range(first_partition, first_partition + partitions):
        if current > 0 and current % count == 0:
            next_shift += 1
        first = (current + start) % count
        replicas = [ordered[first]]
        for j in range(replication_factor - 1):
            replicas.append(ordered[_replica_index(first, next_shift, j, count)])
        result.append(replicas)
    return result


def _replica_index(first: int, shift: int, replica: int, count: int) -> int:
    step = 1 + (shift + replica) % (count - 1)
    return (first + step) % count
