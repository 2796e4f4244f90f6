"""Transactions across a cluster: ``__transaction_state`` has replication factor 3, markers reach
partitions led by other brokers (WriteTxnMarkers between brokers), and when the transaction
coordinator is killed -9 the new leader of the id's partition takes over: committed transactions
stay committed, the producer goes on committing, and read_committed consumers see every committed
record once and nothing aborted.

Three brokers on a real ZooKeeper; confluent-kafka's transactional producer and consumers, and
Kafka's TransactionalMessageCopier (the Java clients, in transaction version 2).
"""

from __future__ import annotations

import os
import signal
import uuid

import pytest
from confluent_kafka import Producer

from cluster_tests.clients import create_topic, read_committed
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_copier import copy_exactly_once
from compat_tests.raw_kafka import RawConnection
from pykafkad.coordinator.transaction.transaction_log import partition_for
from wire.error_codes import ErrorCode

TXN_PARTITIONS = 3
SETTINGS = {"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
            "transaction.state.log.num.partitions": str(TXN_PARTITIONS)}
TOPIC_PARTITIONS = 3
DESCRIBE_TRANSACTIONS = 65
# A stopped follower leaves the ISR soon enough for a test.
FAST_ISR = {"replica.lag.time.max.ms": "6000"}



def _transaction(producer: Producer, topic: str, values: list[bytes], commit: bool = True) -> None:
    producer.begin_transaction()
    for i, v in enumerate(values):
        producer.produce(topic, v, partition=i % TOPIC_PARTITIONS)
    if commit:
        producer.commit_transaction(60)
    else:
        producer.flush(60)
        producer.abort_transaction(60)


@pytest.mark.cluster_timeout(240)
def test_the_transaction_coordinator_killed_hands_its_ids_to_the_new_leader(cluster: Cluster) -> None:
    cluster.start_brokers(SETTINGS)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        topic = "txn-out"
        create_topic(cluster, topic, partitions=TOPIC_PARTITIONS, configs={"min.insync.replicas": "2"})
        txn_id = "failover-" + uuid.uuid4().hex[:8]
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": txn_id,
                             "transaction.timeout.ms": 60000})
        producer.init_transactions(60)
        _transaction(producer, topic, [b"a1", b"a2", b"a3"])
        _transaction(producer, topic, [b"x1", b"x2", b"x3"], commit=False)

        state_path = f"/brokers/topics/__transaction_state/partitions/{partition_for(txn_id, TXN_PARTITIONS)}/state"
        state = view.wait_data(state_path, lambda s: s is not None and len(s["isr"]) == 3)
        coordinator = state["leader"]
        cluster.brokers[coordinator].kill9()
        view.wait_data(state_path, lambda s: s["leader"] not in (coordinator, -1))

        _transaction(producer, topic, [b"b1", b"b2", b"b3"])
        _transaction(producer, topic, [b"y1"], commit=False)
        _transaction(producer, topic, [b"c1", b"c2", b"c3"])
        got = read_committed(cluster.bootstrap, topic, TOPIC_PARTITIONS, 9)
        assert sorted(got) == sorted([b"a1", b"a2", b"a3", b"b1", b"b2", b"b3", b"c1", b"c2", b"c3"])

        cluster.start_broker(coordinator, SETTINGS)
        view.wait_data(state_path, lambda s: len(s["isr"]) == 3)
    finally:
        view.close()


def _state_at(cluster: Cluster, node_id: int, txn_id: str) -> str:
    """The id's state as broker ``node_id`` describes it (DescribeTransactions)."""
    with RawConnection(cluster.brokers[node_id].port) as conn:
        [state] = conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [txn_id]})["transaction_states"]
    return state["transaction_state"] if state["error_code"] == ErrorCode.NONE else ErrorCode(state["error_code"]).name


@pytest.mark.cluster_timeout(300)
def test_the_coordinator_killed_in_the_middle_of_a_commit_the_transaction_commits_whole(cluster: Cluster) -> None:
    """The commit is held between its PrepareCommit record and its markers (the leader of one
    written partition is stopped), the coordinator is killed -9 there, then the stopped broker
    resumes: the new coordinator writes the remaining markers and every record of the transaction
    is committed, none left out."""
    settings = {**SETTINGS, **FAST_ISR}
    cluster.start_brokers(settings)
    view = ZooKeeperView(cluster.zk_connect)
    stopped = None
    try:
        topic = "txn-mid"
        states = create_topic(cluster, topic, partitions=TOPIC_PARTITIONS, configs={"min.insync.replicas": "2"})
        txn_id = "mid-" + uuid.uuid4().hex[:8]
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": txn_id,
                             "transaction.timeout.ms": 120000})
        producer.init_transactions(60)
        _transaction(producer, topic, [b"a1", b"a2", b"a3"])
        state_path = f"/brokers/topics/__transaction_state/partitions/{partition_for(txn_id, TXN_PARTITIONS)}/state"
        coordinator = view.wait_data(state_path, lambda s: s is not None and len(s["isr"]) == 3)["leader"]
        held = next(s["leader"] for s in states if s["leader"] != coordinator)

        producer.begin_transaction()
        for i in range(TOPIC_PARTITIONS):
            producer.produce(topic, b"m%d" % i, partition=i)
        assert producer.flush(60) == 0
        stopped = cluster.brokers[held].proc
        assert stopped is not None
        os.kill(stopped.pid, signal.SIGSTOP)
        producer.commit_transaction(120)  # answered once PrepareCommit is written
        assert _state_at(cluster, coordinator, txn_id) == "PrepareCommit"
        cluster.brokers[coordinator].kill9()
        os.kill(stopped.pid, signal.SIGCONT)
        stopped = None
        view.wait_data(state_path, lambda s: s["leader"] not in (coordinator, -1))

        _transaction(producer, topic, [b"c1", b"c2", b"c3"])
        got = read_committed(cluster.bootstrap, topic, TOPIC_PARTITIONS, 9)
        assert sorted(got) == sorted([b"a1", b"a2", b"a3", b"m0", b"m1", b"m2", b"c1", b"c2", b"c3"])
        cluster.start_broker(coordinator, settings)
    finally:
        if stopped is not None:
            os.kill(stopped.pid, signal.SIGCONT)
        view.close()


@pytest.mark.cluster_timeout(240)
def test_java_clients_in_transaction_version_2_across_the_cluster(cluster: Cluster) -> None:
    """Kafka's TransactionalMessageCopier (Java 4.1 clients, transaction version 2) with random
    aborts, writing to partitions led by every broker: their leaders add them to the transaction
    through the coordinator on another broker (AddPartitionsToTxn v4+ between brokers), and the
    group coordinator adds the offsets partition for TxnOffsetCommit v5."""
    cluster.start_brokers(SETTINGS)
    source, target = f"copy-in-{uuid.uuid4().hex[:6]}", f"copy-out-{uuid.uuid4().hex[:6]}"
    create_topic(cluster, source, partitions=1)
    create_topic(cluster, target, partitions=TOPIC_PARTITIONS)
    txn_id = copy_exactly_once(cluster.bootstrap, source, target, TOPIC_PARTITIONS, records=1000,
                               transaction_size=50)
    with RawConnection(cluster.brokers[1].port) as conn:
        coordinator = conn.request(10, 3, {"key": txn_id, "key_type": 1})["node_id"]
    with RawConnection(cluster.brokers[coordinator].port) as conn:
        [state] = conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [txn_id]})["transaction_states"]
    assert state["producer_epoch"] >= 20, f"an epoch bump per transaction (version 2): {state}"
