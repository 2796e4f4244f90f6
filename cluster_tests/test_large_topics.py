"""A topic larger than one ZooKeeper request is created, grown and deleted on a stock ZooKeeper.

ZooKeeper drops the connection of a request over its ``jute.maxbuffer`` (1 MB by default, which
the test ZooKeeper keeps). A topic's nodes are two per partition; with a long topic name 2,000
partitions are about 1.4 MB of them, so the controller writes them in several commits
(``controller/topic_node_writes.py``). Every broker must still show the whole topic with a
leader for each partition, and records must go through its first and last partitions.

Three brokers on a real ZooKeeper; confluent-kafka's admin client, producer and consumer.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView

# 200 characters: the partitions' directories ("<name>-1999") stay inside a file name's 255.
TOPIC = "large-" + "x" * 194
PARTITIONS = 2000
GROWN = 3200


def _shown_whole(bootstrap: str, partitions: int) -> bool:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = admin.list_topics(TOPIC, timeout=20).topics.get(TOPIC)
    return (topic is not None and topic.error is None and len(topic.partitions) == partitions
            and all(p.leader >= 0 for p in topic.partitions.values()))


def _wait_every_broker_shows(cluster: Cluster, partitions: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    for broker in cluster.brokers.values():
        while not _shown_whole(broker.bootstrap, partitions):
            assert time.monotonic() < deadline, f"{broker.name} does not show {partitions} partitions with leaders"
            time.sleep(0.2)


def _round_trip(bootstrap: str, partitions: list[int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    delivered: list[tuple[int, int]] = []

    def on_delivery(err: object, msg: object) -> None:
        assert err is None, err
        delivered.append((msg.partition(), msg.offset()))  # type: ignore[attr-defined]

    for p in partitions:
        producer.produce(TOPIC, f"to {p}".encode(), partition=p, on_delivery=on_delivery)
    assert producer.flush(60) == 0
    assert sorted(delivered) == [(p, 0) for p in sorted(partitions)]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "large", "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in partitions])
    got: dict[int, bytes] = {}
    deadline = time.monotonic() + 60
    while len(got) < len(partitions):
        assert time.monotonic() < deadline, f"read {sorted(got)} of {partitions}"
        msg = consumer.poll(1)
        if msg is not None and msg.error() is None:
            got[msg.partition()] = msg.value()
    consumer.close()
    assert got == {p: f"to {p}".encode() for p in partitions}


@pytest.mark.cluster_timeout(240)
def test_a_topic_larger_than_one_zookeeper_request_is_created_grown_and_deleted(cluster: Cluster) -> None:
    cluster.start_brokers()
    admin = AdminClient({"bootstrap.servers": cluster.brokers[1].bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)], operation_timeout=120,
                        request_timeout=150)[TOPIC].result(180)
    _wait_every_broker_shows(cluster, PARTITIONS)
    _round_trip(cluster.bootstrap, [0, PARTITIONS - 1])

    admin.create_partitions([NewPartitions(TOPIC, GROWN)], operation_timeout=120,
                            request_timeout=150)[TOPIC].result(180)
    _wait_every_broker_shows(cluster, GROWN)
    _round_trip(cluster.bootstrap, [GROWN - 1])

    admin.delete_topics([TOPIC], operation_timeout=120, request_timeout=150)[TOPIC].result(180)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/topics", lambda topics: TOPIC not in topics)
    finally:
        view.close()
    for broker in cluster.brokers.values():
        deadline = time.monotonic() + 60
        while AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=20).topics.get(TOPIC):
            assert time.monotonic() < deadline, f"{broker.name} still shows {TOPIC}"
            time.sleep(0.2)
