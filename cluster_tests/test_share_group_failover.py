"""A share group (KIP-932) carries on through the kill -9 of its partition's leader, or of its
group coordinator, on three brokers.

A producer writes to a one-partition topic replicated three times while a share member (the Java
``KafkaShareConsumer`` 4.4.0, then librdkafka's ``ShareConsumer``) reads and accepts; the
partition's leader, or the group's coordinator, is killed with SIGKILL mid-way.  A new leader loads
the share-partition's state from ``__share_group_state`` (replication factor 3, its leader reached
over the share coordinator APIs when it is another broker); a new coordinator loads the group's
membership from ``__consumer_offsets``, so its member carries on at its epoch.  So:

- every record is delivered at least once;
- no record whose acceptance the member saw committed before the kill is delivered again.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

import pytest
from confluent_kafka import Producer

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from compat_tests.consumer_protocol_support import Member, wait_until
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from compat_tests.test_share_consumers import OVERRIDES, SHARE_MEMBER, Deliveries

SETTINGS = {**OVERRIDES, "offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "3",
            "share.coordinator.state.topic.replication.factor": "3", "share.coordinator.state.topic.min.isr": "2",
            "share.coordinator.state.topic.num.partitions": "3"}
RECORDS = 200


def _leader(cluster: Cluster, topic: str) -> int:
    broker = next(b for b in cluster.brokers.values() if b.is_alive())
    with RawConnection(broker.port) as conn:
        md = conn.request(3, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                  "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    return md["topics"][0]["partitions"][0]["leader_id"]


def _accepted_before(member: Member, lines_then: int) -> set[str]:
    """The values whose acceptance the member saw committed among its first ``lines_then`` lines."""
    with member.changed:
        lines = member.lines[:lines_then]
    last = max((i for i, line in enumerate(lines) if line == "committed"), default=-1)
    accepted: set[str] = set()
    pending: list[str] = []
    for line in lines[:last + 1]:
        if line.startswith("record "):
            pending.append(line.split(" ", 5)[5])
        elif line == "committed":
            accepted.update(pending)
            pending = []
        elif line == "commit failed":
            pending = []
    return accepted


def _coordinator(cluster: Cluster, group: str) -> int:
    broker = next(b for b in cluster.brokers.values() if b.is_alive())
    with RawConnection(broker.port) as conn:
        found = conn.request(10, 4, {"key_type": 0, "coordinator_keys": [group]})["coordinators"][0]
    assert found["error_code"] == 0, found
    return found["node_id"]


@pytest.mark.cluster_timeout(300)
@pytest.mark.parametrize("killed", ["leader", "coordinator"])
@pytest.mark.parametrize("client", ["java", "rdkafka"])
def test_share_group_resumes_after_a_broker_is_killed(cluster: Cluster, client: str, killed: str) -> None:
    for node_id in (1, 2, 3):
        cluster.start_broker(node_id, SETTINGS)
    topic, group = f"share-failover-{client}-{killed}", f"share-failover-{client}-{killed}"
    create_topic(cluster, topic, 1, configs={"min.insync.replicas": "2"})
    run_tool("kafka-configs", ["--bootstrap-server", cluster.bootstrap, "--alter", "--entity-type", "groups",
                               "--entity-name", group, "--add-config", "share.auto.offset.reset=earliest"])
    before = [f"before{i}" for i in range(RECORDS)]
    after = [f"after{i}" for i in range(RECORDS)]
    failures: list[str] = []

    def produce(values: list[str]) -> None:
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0,
                             "message.timeout.ms": 120000})
        for value in values:
            producer.produce(topic, value=value.encode(),
                             on_delivery=lambda err, _m: failures.append(str(err)) if err else None)
            producer.poll(0)
            time.sleep(0.005)
        if producer.flush(120) != 0:
            failures.append("not every record was acknowledged")

    member = Member(client, cluster.bootstrap, group, topic, programs=SHARE_MEMBER, mode=("ack",))
    writer = threading.Thread(target=produce, args=(before,))
    try:
        writer.start()
        seen = Deliveries(member)
        wait_until("a quarter of the records accepted", lambda: len(_accepted_before(member, len(member.lines)))
                   >= RECORDS // 4)
        leader = _leader(cluster, topic)
        victim = leader if killed == "leader" else _coordinator(cluster, group)
        said = len(member.lines)
        cluster.brokers[victim].kill9()
        accepted = _accepted_before(member, said)
        writer.join(timeout=180)
        # The rest is written once another broker leads the partition, and read from it.
        produce(after)
        assert not writer.is_alive() and failures == []
        wait_until("another leader", lambda: _leader(cluster, topic) != victim)
        member.wait_for("every record delivered", lambda: set(before + after) <= set(seen.values()), timeout_s=120)
        member.leave()
        again = Counter(seen.values())
        assert [v for v in accepted if again[v] > 1] == []
    finally:
        member.close()
        writer.join(timeout=1)
