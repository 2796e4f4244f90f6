"""Consumer groups across a cluster: a group's coordinator is the leader of its
``__consumer_offsets`` partition (replication factor 3), other brokers answer NOT_COORDINATOR, and
when the coordinator is killed -9 the group moves to the new leader with every acknowledged
commit, and goes on consuming and committing.

Three brokers on a real ZooKeeper; confluent-kafka (librdkafka) and kafka-python consumers, the
AdminClient to find the coordinator, raw requests for exact error codes.
"""

from __future__ import annotations

import uuid

import kafka
import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from cluster_tests.clients import create_topic, produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

PARTITIONS = 3
RECORDS = 600
FIND_COORDINATOR = 10
OFFSET_FETCH = 9
GROUPS = {"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "3",
          "group.initial.rebalance.delay.ms": "0"}


def _start(cluster: Cluster, topic: str) -> None:
    cluster.start_brokers(GROUPS)
    create_topic(cluster, topic, PARTITIONS)
    produce(cluster.bootstrap, topic, list(range(RECORDS)))


def _coordinator(bootstrap: str, group: str) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return admin.describe_consumer_groups([group], request_timeout=30)[group].result().coordinator.id


def _wait_offsets_replicated(cluster: Cluster) -> None:
    """Every ``__consumer_offsets`` partition has its three replicas in sync, so a commit is
    acknowledged by all (and so the survivors have it)."""
    view = ZooKeeperView(cluster.zk_connect)
    try:
        for p in range(int(GROUPS["offsets.topic.num.partitions"])):
            view.wait_data(f"/brokers/topics/__consumer_offsets/partitions/{p}/state",
                           lambda s: s is not None and len(s["isr"]) == 3)
    finally:
        view.close()


def _commit(consumer: Consumer) -> None:
    """A synchronous commit, retried on the retriable errors a moving coordinator answers."""
    for _ in range(30):
        try:
            consumer.commit(asynchronous=False)
            return
        except KafkaException as e:
            if not e.args[0].retriable():
                raise
    raise AssertionError("the commit never succeeded")


def _poll_values(consumer: Consumer, seen: set[int], until: int) -> None:
    while len(seen) < until:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        seen.add(int(msg.value()))


@pytest.mark.cluster_timeout(300)
def test_the_group_moves_with_its_commits_when_the_coordinator_is_killed(cluster: Cluster) -> None:
    _start(cluster, "events")
    group = f"failover-{uuid.uuid4()}"
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "session.timeout.ms": 10000})
    try:
        consumer.subscribe(["events"])
        seen: set[int] = set()
        _poll_values(consumer, seen, RECORDS // 2)
        _wait_offsets_replicated(cluster)
        _commit(consumer)
        assignment = consumer.assignment()
        committed = {(tp.partition, tp.offset) for tp in consumer.committed(assignment, timeout=30)}
        # A partition nothing was read from yet has no commit (librdkafka's -1001).
        assert sum(max(offset, 0) for _, offset in committed) == len(seen)

        coordinator = _coordinator(cluster.bootstrap, group)
        for node_id, broker in cluster.brokers.items():
            with RawConnection(broker.port) as conn:
                found = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
                assert found["coordinators"][0]["node_id"] == coordinator
                fetched = conn.request(OFFSET_FETCH, 7, {"group_id": group, "topics": None,
                                                         "require_stable": False})
                expected = ErrorCode.NONE if node_id == coordinator else ErrorCode.NOT_COORDINATOR
                assert fetched["error_code"] == expected, (node_id, coordinator, fetched["error_code"])

        cluster.brokers[coordinator].kill9()
        survivors = ",".join(b.bootstrap for n, b in cluster.brokers.items() if n != coordinator)
        # The commits acknowledged before the kill are what the new coordinator answers.
        after = {(tp.partition, tp.offset) for tp in consumer.committed(assignment, timeout=60)}
        assert after == committed
        new_coordinator = _coordinator(survivors, group)
        assert new_coordinator != coordinator

        # The group goes on: the rest is consumed and committed through the new coordinator.
        _poll_values(consumer, seen, RECORDS)
        assert seen == set(range(RECORDS))
        _commit(consumer)
        final = consumer.committed([TopicPartition("events", p) for p in range(PARTITIONS)], timeout=30)
        assert sum(tp.offset for tp in final) == RECORDS
    finally:
        consumer.close()


@pytest.mark.cluster_timeout(300)
def test_kafka_python_commits_survive_a_coordinator_kill(cluster: Cluster) -> None:
    _start(cluster, "orders")
    group = f"kp-{uuid.uuid4()}"
    consumer = kafka.KafkaConsumer("orders", bootstrap_servers=cluster.bootstrap.split(","), group_id=group,
                                   enable_auto_commit=False, auto_offset_reset="earliest",
                                   session_timeout_ms=10000, heartbeat_interval_ms=1000,
                                   consumer_timeout_ms=60000)
    try:
        seen: set[int] = set()
        for msg in consumer:
            seen.add(int(msg.value))
            if len(seen) >= RECORDS // 2:
                break
        _wait_offsets_replicated(cluster)
        consumer.commit()
        partitions = [kafka.TopicPartition("orders", p) for p in range(PARTITIONS)]
        committed = {tp.partition: consumer.committed(tp) for tp in partitions}
        assert sum(o or 0 for o in committed.values()) == len(seen)

        cluster.brokers[_coordinator(cluster.bootstrap, group)].kill9()
        # kafka-python asks its coordinator; it finds the new one and gets the same offsets.
        assert {tp.partition: consumer.committed(tp) for tp in partitions} == committed

        for msg in consumer:
            seen.add(int(msg.value))
            if len(seen) >= RECORDS:
                break
        assert seen == set(range(RECORDS))
        consumer.commit()
        assert sum(consumer.committed(tp) or 0 for tp in partitions) == RECORDS
    finally:
        consumer.close()
