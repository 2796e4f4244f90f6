"""A consumer-protocol group (KIP-848) survives the kill -9 of its coordinator on three brokers.

Two consumers (``group.protocol=consumer``; the Java consumer 4.4.0, then librdkafka) share a topic
of six partitions replicated three times; the broker coordinating their group is killed with
SIGKILL.  The new coordinator loads the group from ``__consumer_offsets`` (replication factor 3)
with its epochs and assignment, so the members carry on at their epochs: no partition is revoked or
assigned again (no rebalance), every record produced before and after the kill is consumed, and
none twice.
"""

from __future__ import annotations

from collections import Counter

import pytest

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.consumer_protocol_support import CONSUMER_PROTOCOL_OVERRIDES, Member, wait_until
from compat_tests.groups_support import produce_spread
from compat_tests.raw_kafka import RawConnection

PARTITIONS = 6
BATCH = 120
OFFSETS_PARTITIONS = 3
SETTINGS = {**CONSUMER_PROTOCOL_OVERRIDES, "offsets.topic.replication.factor": "3",
            "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS)}


def _coordinator(cluster: Cluster, group: str) -> int:
    broker = next(b for b in cluster.brokers.values() if b.is_alive())
    with RawConnection(broker.port) as conn:
        found = conn.request(10, 4, {"key_type": 0, "coordinator_keys": [group]})["coordinators"][0]
    assert found["error_code"] == 0, found
    return found["node_id"]


def _offsets_in_sync(cluster: Cluster) -> None:
    view = ZooKeeperView(cluster.zk_connect)
    try:
        for p in range(OFFSETS_PARTITIONS):
            view.wait_data(f"/brokers/topics/__consumer_offsets/partitions/{p}/state",
                           lambda s: s is not None and len(s["isr"]) == 3)
    finally:
        view.close()


@pytest.mark.cluster_timeout(300)
@pytest.mark.parametrize("client", ["java", "rdkafka"])
def test_consumer_group_survives_coordinator_kill9(cluster: Cluster, client: str) -> None:
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, SETTINGS)
    topic, group = "kip848-failover", f"kip848-failover-{client}"
    create_topic(cluster, topic, PARTITIONS)
    produce_spread(cluster.bootstrap, topic, BATCH, PARTITIONS, "before")
    members: list[Member] = []
    try:
        a = Member(client, cluster.bootstrap, group, f"topic:{topic}")
        members.append(a)
        a.wait_for("owning every partition", lambda: len(a.owned()) == PARTITIONS)
        b = Member(client, cluster.bootstrap, group, f"topic:{topic}")
        members.append(b)
        wait_until("a and b sharing the partitions", lambda: len(a.owned()) == len(b.owned()) == PARTITIONS // 2)
        everything = lambda: set(a.values()) | set(b.values())  # noqa: E731
        wait_until("the first batch consumed", lambda: {f"before-{i}" for i in range(BATCH)} <= everything())
        _offsets_in_sync(cluster)

        coordinator = _coordinator(cluster, group)
        owned = (a.owned(), b.owned())
        said = (len(a.lines), len(b.lines))
        cluster.brokers[coordinator].kill9()
        produce_spread(cluster.bootstrap, topic, BATCH, PARTITIONS, "after")
        wanted = {f"before-{i}" for i in range(BATCH)} | {f"after-{i}" for i in range(BATCH)}
        wait_until("the second batch consumed after the kill", lambda: wanted <= everything(), timeout_s=120)
        assert _coordinator(cluster, group) != coordinator

        # No rebalance: neither member was told to give up or take partitions after the kill.
        for member, before, count in zip((a, b), owned, said, strict=True):
            changes = [line for line in member.lines[count:] if line.startswith(("assigned ", "revoked "))
                       and line.split(" ", 1)[1]]
            assert not changes and member.owned() == before, (changes, member.lines[-20:])
        counts = Counter(a.values() + b.values())
        assert not [v for v, n in counts.items() if n > 1], "records consumed twice"
    finally:
        for m in members:
            m.close()
