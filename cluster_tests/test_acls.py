"""ACLs on a cluster: three brokers with an authorizer replicate over SASL_PLAINTEXT as their own
super user; an ACL created through one broker lands at Kafka's ``/kafka-acl`` znode and is enforced
by the others; a removal through a third takes it away everywhere."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from cluster_tests.conftest import SESSION_TIMEOUT_MS, Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import BrokerProcess, free_port

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" '
        'password="broker-secret" user_broker="broker-secret" user_admin="admin-secret" '
        'user_alice="alice-secret";')
TOPIC = "guarded"


def _client(port: int, user: str, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret", **extra}


def _produce_one(config: dict[str, Any], value: bytes) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer = Producer({**config, "acks": "all", "message.timeout.ms": 10000, "retries": 0})
    producer.produce(TOPIC, value, on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(30)
    return outcome[0]


@pytest.mark.cluster_timeout(240)
def test_an_acl_made_through_one_broker_is_enforced_by_all(cluster: Cluster) -> None:
    sasl_ports: dict[int, int] = {}
    for node_id in (1, 2, 3):
        sasl_ports[node_id] = free_port()
        broker = BrokerProcess(cluster.root / f"broker-{node_id}" / "logs", name=f"broker-{node_id}")
        listeners = f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{sasl_ports[node_id]}"
        cluster.brokers[node_id] = broker
        broker.overrides.update({
            "zookeeper.connect": cluster.zk_connect, "zookeeper.session.timeout.ms": SESSION_TIMEOUT_MS,
            "broker.id": str(node_id), "node.id": str(node_id),
            "listeners": listeners, "advertised.listeners": listeners,
            "inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "super.users": "User:broker;User:admin", "offsets.topic.replication.factor": "3"})
        broker.start()
    view = ZooKeeperView(cluster.zk_connect)
    try:
        admin = AdminClient(_client(sasl_ports[1], "admin"))
        admin.create_topics([NewTopic(TOPIC, 3, 3, config={"min.insync.replicas": "3"})])[TOPIC].result(timeout=30)
        # The followers fetch as User:broker, a super user: every ISR fills.
        for p in range(3):
            view.wait_data(f"/brokers/topics/{TOPIC}/partitions/{p}/state",
                           lambda s: s is not None and len(s["isr"]) == 3)
        alice = _client(sasl_ports[1], "alice")
        error = _produce_one(alice, b"before")
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

        second = AdminClient(_client(sasl_ports[2], "admin"))
        binding = AclBinding(ResourceType.TOPIC, TOPIC, ResourcePatternType.LITERAL, "User:alice", "*",
                             AclOperation.WRITE, AclPermissionType.ALLOW)
        second.create_acls([binding])[binding].result(timeout=30)
        stored = view.wait_data(f"/kafka-acl/Topic/{TOPIC}", lambda d: d is not None)
        assert stored == {"version": 1, "acls": [{"principal": "User:alice", "permissionType": "Allow",
                                                  "operation": "Write", "host": "*"}]}
        # Each partition's leader decides: all three brokers must know the ACL. Every write is acks=all
        # with min.insync.replicas=3, so it also went through both followers' fetches.
        _until(lambda: _produce_one(alice, b"w") is None)
        delivered: dict[int, KafkaError | None] = {}
        producer = Producer({**alice, "acks": "all"})
        for p in range(3):
            producer.produce(TOPIC, b"p", partition=p,
                             on_delivery=lambda err, msg: delivered.__setitem__(msg.partition(), err))
        producer.flush(30)
        assert delivered == {0: None, 1: None, 2: None}

        third = AdminClient(_client(sasl_ports[3], "admin"))
        gone = AclBindingFilter(ResourceType.TOPIC, TOPIC, ResourcePatternType.LITERAL, None, None,
                                AclOperation.ANY, AclPermissionType.ANY)
        assert len(third.delete_acls([gone])[gone].result(timeout=30)) == 1
        view.wait_data(f"/kafka-acl/Topic/{TOPIC}", lambda d: d is None)
        _until(lambda: (e := _produce_one(alice, b"after")) is not None
               and e.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED)
    finally:
        view.close()


def _until(outcome: Any, timeout: float = 30) -> None:
    """Retry a client action until it has the expected outcome (a watch reaching each broker)."""
    deadline = time.monotonic() + timeout
    while not outcome():
        assert time.monotonic() < deadline, "the ACL change did not reach every broker"
