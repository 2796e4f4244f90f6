"""A follower starts copying a new partition as soon as its leader can serve it.

Each broker applies a new topic from ZooKeeper on its own, so a follower's first fetch often reaches
a leader that has not opened the partition yet (UNKNOWN_TOPIC_OR_PARTITION, or
NOT_LEADER_OR_FOLLOWER on a restart).  Waiting the whole `replica.fetch.backoff.ms` after that
stalls the first acks=all writes on the partition for as long.  With a backoff far longer than the
producer's timeout, every first write must still be acknowledged: the follower asks again shortly.
"""

from __future__ import annotations

import pytest

from cluster_tests.clients import create_topic, produce
from cluster_tests.conftest import Cluster

# Longer than the producer's message timeout below, shorter than the ISR's patience: only a
# follower that asks again early lets the first acks=all writes through.
SLOW_BACKOFF = {"replica.fetch.backoff.ms": "120000"}
PARTITIONS = 9


@pytest.mark.cluster_timeout(180)
def test_the_first_acks_all_writes_on_new_partitions_do_not_wait_out_the_fetch_backoff(cluster: Cluster) -> None:
    cluster.start_brokers(SLOW_BACKOFF)
    for round_ in range(2):
        topic = f"fresh-{round_}"
        create_topic(cluster, topic, partitions=PARTITIONS)
        for p in range(PARTITIONS):
            acked = produce(cluster.bootstrap, topic, [p], partition=p, **{"message.timeout.ms": 20000})
            assert acked == {p: (p, 0)}
