"""Transaction version 2 (KIP-890 part 2), as a new Kafka 4.1 cluster runs it: ApiVersions
finalizes ``transaction.version=2``; a transactional batch in Produce v12 adds its partition to
the transaction (its leader asks the coordinator), TxnOffsetCommit v5 adds the group's offsets
partition, and EndTxn v5 bumps the producer epoch at every end and answers the new one, so the
markers fence the epoch that wrote the transaction.  ``kafka-features.sh`` moves the cluster back
to version 1, and Java clients follow.

Raw requests for the exact answers; confluent-kafka to read what was committed; Kafka's own
TransactionalMessageCopier and kafka-features.sh for the Java side
(``java_copier.py``).
"""

from __future__ import annotations

import re
import time
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.java_copier import run_transactional_copier
from compat_tests.java_tools import run_tool, table_row
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response
from pykafkad import _rust_log
from wire.error_codes import ErrorCode

PRODUCE = 0
OFFSET_FETCH = 9
FIND_COORDINATOR = 10
API_VERSIONS = 18
INIT_PRODUCER_ID = 22
END_TXN = 26
TXN_OFFSET_COMMIT = 28
DESCRIBE_TRANSACTIONS = 65


def _until_ready(call: Any, timeout_s: float = 30.0) -> dict[str, Any]:
    """``call()`` until its answer is not a retriable coordinator error (a topic just created loads)."""
    retriable = {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                 ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS}
    deadline = time.monotonic() + timeout_s
    while True:
        answer = call()
        if answer["error_code"] not in retriable or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


class _Producer:
    """A transactional producer speaking raw requests on one connection."""

    def __init__(self, conn: RawConnection, txn_id: str, topic: str) -> None:
        self.conn, self.txn_id, self.topic = conn, txn_id, topic
        assert conn.request(FIND_COORDINATOR, 3, {"key": txn_id, "key_type": 1})["error_code"] == 0
        init = _until_ready(lambda: conn.request(INIT_PRODUCER_ID, 4, {
            "transactional_id": txn_id, "transaction_timeout_ms": 30000, "producer_id": -1, "producer_epoch": -1}))
        assert init["error_code"] == ErrorCode.NONE, init
        self.pid, self.epoch = init["producer_id"], init["producer_epoch"]
        self.sequences: dict[int, int] = {}

    def produce(self, partition: int, value: bytes, version: int = 12, epoch: int | None = None) -> int:
        epoch = self.epoch if epoch is None else epoch
        seq = self.sequences.get(partition, 0) if epoch == self.epoch else 0
        batch = _rust_log.encode_batch([(None, value)], int(time.time() * 1000), producer_id=self.pid,
                                       producer_epoch=epoch, base_sequence=seq, transactional=True)
        body = {**produce_body(self.topic, partition, batch), "transactional_id": self.txn_id}
        code = produce_partition_response(self.conn.request(PRODUCE, version, body))["error_code"]
        if code == ErrorCode.NONE and epoch == self.epoch:
            self.sequences[partition] = seq + 1
        return code

    def end(self, commit: bool, epoch: int | None = None) -> dict[str, Any]:
        return _until_ready(lambda: self.conn.request(END_TXN, 5, {
            "transactional_id": self.txn_id, "producer_id": self.pid,
            "producer_epoch": self.epoch if epoch is None else epoch, "committed": commit}))

    def adopt(self, answer: dict[str, Any]) -> None:
        """As the Java client does with EndTxn v5's answer: the new epoch, sequences from 0."""
        assert answer["producer_id"] == self.pid
        self.epoch = answer["producer_epoch"]
        self.sequences.clear()

    def described(self) -> dict[str, Any]:
        [state] = self.conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [self.txn_id]})[
            "transaction_states"]
        return state

    def wait_state(self, state: str) -> None:
        deadline = time.monotonic() + 30
        while self.described()["transaction_state"] != state:
            assert time.monotonic() < deadline, f"{self.txn_id} never reached {state}: {self.described()}"
            time.sleep(0.05)


def _read_committed(broker: BrokerProcess, topic: str, partitions: int, expected: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"check-{topic}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < expected and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        for _ in range(5):  # nothing more may arrive
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        return got
    finally:
        consumer.close()


def test_api_versions_finalize_transaction_version_2(broker: BrokerProcess) -> None:
    with RawConnection(broker.port) as conn:
        v4 = conn.request(API_VERSIONS, 4, {"client_software_name": "t", "client_software_version": "1"})
        v3 = conn.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert {"name": "transaction.version", "min_version": 0, "max_version": 2} in v4["supported_features"]
    # Before v4 a feature whose range starts at 0 is left out (KAFKA-17492): metadata.version only, as Kafka.
    assert v3["supported_features"] == [{"name": "metadata.version", "min_version": 7, "max_version": 33}]
    for answer in (v3, v4):
        assert answer["finalized_features_epoch"] >= 0
        assert {"name": "transaction.version", "max_version_level": 2,
                "min_version_level": 2} in answer["finalized_features"]
    versions = {k["api_key"]: k["max_version"] for k in v4["api_keys"]}
    assert versions[PRODUCE] >= 12 and versions[END_TXN] == 5 and versions[TXN_OFFSET_COMMIT] == 6


def test_produce_v12_adds_partitions_and_end_txn_v5_bumps_the_epoch(broker: BrokerProcess) -> None:
    topic = unique_topic("tv2")
    create_topic(broker.bootstrap, topic, 2)
    with RawConnection(broker.port) as conn:
        p = _Producer(conn, f"tv2-{topic}", topic)
        first = p.epoch
        # No AddPartitionsToTxn: the leader adds the partition to the transaction.
        assert p.produce(0, b"c0") == ErrorCode.NONE
        described = p.described()
        assert described["transaction_state"] == "Ongoing"
        assert described["topics"] == [{"topic": topic, "partitions": [0]}]
        assert p.produce(0, b"c1") == ErrorCode.NONE
        committed = p.end(commit=True)
        assert committed["error_code"] == ErrorCode.NONE
        assert (committed["producer_id"], committed["producer_epoch"]) == (p.pid, first + 1)
        # A retry of that commit, with the epoch it was sent at, is told the same new epoch.
        retried = p.end(commit=True, epoch=first)
        assert (retried["error_code"], retried["producer_epoch"]) == (ErrorCode.NONE, first + 1)
        p.adopt(committed)
        p.wait_state("CompleteCommit")

        # The next transaction, at the new epoch; the old one is fenced on the partitions.
        assert p.produce(1, b"a0") == ErrorCode.NONE
        assert p.produce(1, b"stale", epoch=first) == ErrorCode.INVALID_PRODUCER_EPOCH
        aborted = p.end(commit=False)
        assert (aborted["error_code"], aborted["producer_epoch"]) == (ErrorCode.NONE, first + 2)
        p.wait_state("CompleteAbort")
        again = p.end(commit=False, epoch=first + 1)
        assert (again["error_code"], again["producer_epoch"]) == (ErrorCode.NONE, first + 2), "a retried abort"
        assert p.end(commit=True, epoch=first + 1)["error_code"] == ErrorCode.INVALID_TXN_STATE
        p.adopt(aborted)
        assert p.end(commit=True)["error_code"] == ErrorCode.INVALID_TXN_STATE, "no transaction is open"
        # An abort with nothing open only bumps the epoch.
        bumped = p.end(commit=False)
        assert (bumped["error_code"], bumped["producer_epoch"]) == (ErrorCode.NONE, first + 3)
        # A version 1 request still gets version 1's check: Produce v11 adds nothing.
        p.adopt(bumped)
        assert p.produce(1, b"v11", version=11) == ErrorCode.TRANSACTION_ABORTABLE
    assert sorted(_read_committed(broker, topic, 2, 2)) == [b"c0", b"c1"]


def test_txn_offset_commit_v5_adds_the_offsets_partition(broker: BrokerProcess) -> None:
    topic = unique_topic("tv2-offsets")
    create_topic(broker.bootstrap, topic, 1)
    group = f"group-{topic}"
    with RawConnection(broker.port) as conn:
        assert _until_ready(lambda: conn.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0}))[
            "error_code"] == 0
        p = _Producer(conn, f"tv2-{topic}", topic)

        def commit_offset(version: int, offset: int) -> int:
            body = {"transactional_id": p.txn_id, "group_id": group, "producer_id": p.pid,
                    "producer_epoch": p.epoch, "generation_id": -1, "member_id": "", "group_instance_id": None,
                    "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                               "committed_leader_epoch": -1,
                                                               "committed_metadata": ""}]}]}
            answer = _until_ready(lambda: {"error_code": conn.request(TXN_OFFSET_COMMIT, version, body)[
                "topics"][0]["partitions"][0]["error_code"]})
            return answer["error_code"]

        assert p.produce(0, b"x") == ErrorCode.NONE
        # Version 1's TxnOffsetCommit needs AddOffsetsToTxn first: the coordinator says it is missing.
        assert commit_offset(4, 7) == ErrorCode.TRANSACTION_ABORTABLE
        assert commit_offset(5, 7) == ErrorCode.NONE
        assert p.end(commit=True)["error_code"] == ErrorCode.NONE

        def fetched() -> int:
            body = {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}], "require_stable": True}
            return conn.request(OFFSET_FETCH, 7, body)["topics"][0]["partitions"][0]["committed_offset"]

        deadline = time.monotonic() + 30
        while fetched() != 7:
            assert time.monotonic() < deadline, "the transaction's offset never counted"
            time.sleep(0.05)


def _transactions_tool_epoch(broker: BrokerProcess, txn_id: str) -> int:
    out = run_tool("kafka-transactions", ["--bootstrap-server", broker.bootstrap, "describe",
                                          "--transactional-id", txn_id]).stdout
    header, row = [line for line in out.splitlines() if line.strip()][:2]
    return int(table_row(header, row)["ProducerEpoch"])


def test_kafka_features_tool_moves_java_producers_between_transaction_versions(
        broker_factory: BrokerFactory) -> None:
    """kafka-features.sh describes and downgrades ``transaction.version``; the Java client's
    transactions follow: with 2 each ended transaction bumps the epoch, with 1 the epoch stays."""
    broker = broker_factory("tv-features")
    features = ["--bootstrap-server", broker.bootstrap]
    described = run_tool("kafka-features", [*features, "describe"]).stdout
    assert re.search(r"Feature: transaction.version\s+SupportedMinVersion: 0\s+SupportedMaxVersion: 2\s+"
                     r"FinalizedVersionLevel: 2\s", described), described
    refused = run_tool("kafka-features", [*features, "upgrade", "--feature", "transaction.version=3"], check=False)
    assert refused.returncode != 0 and "supports versions 0-2" in refused.stdout + refused.stderr

    v2_id = run_transactional_copier(broker, records=500, transaction_size=50)
    assert _transactions_tool_epoch(broker, v2_id) >= 10, "an epoch bump per transaction"

    out = run_tool("kafka-features", [*features, "downgrade", "--feature", "transaction.version=1"]).stdout
    assert "transaction.version was downgraded to 1." in out, out
    assert "FinalizedVersionLevel: 1" in run_tool("kafka-features", [*features, "describe"]).stdout
    dry = run_tool("kafka-features", [*features, "upgrade", "--feature", "transaction.version=2", "--dry-run"]).stdout
    assert "transaction.version can be upgraded to 2." in dry, dry
    assert "FinalizedVersionLevel: 1" in run_tool("kafka-features", [*features, "describe"]).stdout, \
        "a dry run changes nothing"
    v1_id = run_transactional_copier(broker, records=500, transaction_size=50)
    assert _transactions_tool_epoch(broker, v1_id) < 3, "version 1 keeps the epoch across transactions"
