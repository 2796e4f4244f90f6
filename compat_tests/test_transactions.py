"""Transactions with confluent-kafka's transactional producer against one broker: committed records
are seen by read_committed consumers and aborted ones are not (the Fetch answer's last stable offset
and aborted-transaction list), while read_uncommitted consumers see both.  A second producer with
the same transactional id fences the first; a transaction left open is aborted after its timeout;
a broker killed with a transaction open comes back with its transactional ids and open
transactions, which the next producer of the id aborts.
"""

from __future__ import annotations

import asyncio
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response
from pykafkad import _rust_log
from wire.error_codes import ErrorCode

DESCRIBE_TRANSACTIONS = 65
PRODUCE = 0
LIST_OFFSETS = 2
INIT_PRODUCER_ID = 22
FIND_COORDINATOR = 10
ADD_PARTITIONS_TO_TXN = 24


def _transactional_producer(broker: BrokerProcess, txn_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id,
                         "transaction.timeout.ms": 30000})
    producer.init_transactions(30)
    return producer


def _read_all(broker: BrokerProcess, topic: str, isolation: str, expected: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"reader-{isolation}",
                         "isolation.level": isolation, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got: list[bytes] = []
        idle = 0
        while idle < 10 and len(got) <= expected:
            msg = consumer.poll(0.5)
            if msg is None:
                idle += 1 if len(got) >= expected else 0
                continue
            if msg.error() is None:
                got.append(msg.value())
        return got
    finally:
        consumer.close()


def test_read_committed_consumers_see_commits_and_never_aborts(broker: BrokerProcess) -> None:
    topic = unique_topic("txn")
    create_topic(broker.bootstrap, topic, 1)
    producer = _transactional_producer(broker, f"txn-{topic}")
    producer.begin_transaction()
    for v in (b"c1", b"c2", b"c3"):
        producer.produce(topic, v, partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for v in (b"a1", b"a2"):
        producer.produce(topic, v, partition=0)
    producer.flush(30)
    producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"c4", partition=0)
    producer.commit_transaction(30)

    assert _read_all(broker, topic, "read_committed", 4) == [b"c1", b"c2", b"c3", b"c4"]
    assert _read_all(broker, topic, "read_uncommitted", 6) == [b"c1", b"c2", b"c3", b"a1", b"a2", b"c4"]
    # Kafka's console consumer and aiokafka drop the aborted records too.
    java = run_tool("kafka-console-consumer", [
        "--bootstrap-server", broker.bootstrap, "--topic", topic, "--partition", "0", "--offset", "earliest",
        "--isolation-level", "read_committed", "--max-messages", "4", "--timeout-ms", "30000"]).stdout
    assert [line for line in java.splitlines() if line.strip()] == ["c1", "c2", "c3", "c4"]
    assert asyncio.run(_aiokafka_read_committed(broker, topic, 4)) == [b"c1", b"c2", b"c3", b"c4"]


async def _aiokafka_read_committed(broker: BrokerProcess, topic: str, count: int) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition as AioPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level="read_committed",
                                enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        tp = AioPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < count and time.monotonic() < deadline:
            batches = await consumer.getmany(tp, timeout_ms=500)
            got += [m.value for m in batches.get(tp, [])]
        return got
    finally:
        await consumer.stop()


def test_a_second_producer_with_the_same_id_fences_the_first_and_aborts_its_transaction(
        broker: BrokerProcess) -> None:
    topic = unique_topic("zombie")
    create_topic(broker.bootstrap, topic, 1)
    txn_id = f"txn-{topic}"
    zombie = _transactional_producer(broker, txn_id)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie", partition=0)
    assert zombie.flush(30) == 0
    successor = _transactional_producer(broker, txn_id)  # aborts the zombie's open transaction
    successor.begin_transaction()
    successor.produce(topic, b"successor", partition=0)
    successor.commit_transaction(30)
    try:
        zombie.commit_transaction(30)
        raise AssertionError("the fenced producer committed")
    except KafkaException as e:
        assert e.args[0].fatal() or e.args[0].name() in ("_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH")
    assert _read_all(broker, topic, "read_committed", 1) == [b"successor"]


def _read_until(broker: BrokerProcess, topic: str, wanted: bytes, timeout_s: float = 60) -> list[bytes]:
    """read_committed from the start until ``wanted`` arrives (the last stable offset passed it)."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "until",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + timeout_s
        while wanted not in got:
            assert time.monotonic() < deadline, f"{wanted!r} never became readable; read {got}"
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        return got
    finally:
        consumer.close()


def test_a_transaction_left_open_is_aborted_after_its_timeout(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("txn-timeout", {
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"})
    topic = unique_topic("hung")
    create_topic(broker.bootstrap, topic, 1)
    hung = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"hung-{topic}",
                     "transaction.timeout.ms": 2000})
    hung.init_transactions(30)
    hung.begin_transaction()
    hung.produce(topic, b"never-committed", partition=0)
    assert hung.flush(30) == 0
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce(topic, b"after", partition=0)
    assert plain.flush(30) == 0
    # Readable only once the coordinator aborted the open transaction before it.
    assert _read_until(broker, topic, b"after") == [b"after"]
    assert "open for more than 2000 ms; aborting it" in broker.stderr_text()


def test_transactions_survive_a_broker_kill(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("txn-kill")
    topic = unique_topic("killed")
    create_topic(broker.bootstrap, topic, 1)
    txn_id = f"killed-{topic}"
    first = _transactional_producer(broker, txn_id)
    first.begin_transaction()
    first.produce(topic, b"committed", partition=0)
    first.commit_transaction(30)
    first.begin_transaction()
    first.produce(topic, b"open-at-the-kill", partition=0)
    assert first.flush(30) == 0
    broker.kill9()
    broker.start()
    # The restarted coordinator has the id back: a new producer fences the open transaction.
    second = _transactional_producer(broker, txn_id)
    second.begin_transaction()
    second.produce(topic, b"after-restart", partition=0)
    second.commit_transaction(30)
    assert _read_until(broker, topic, b"after-restart") == [b"committed", b"after-restart"]


def test_kafka_transactions_tool_lists_describes_and_aborts(broker: BrokerProcess) -> None:
    topic = unique_topic("tool")
    create_topic(broker.bootstrap, topic, 1)
    txn_id = f"tool-{topic}"
    producer = _transactional_producer(broker, txn_id)
    producer.begin_transaction()
    producer.produce(topic, b"left-open", partition=0)
    assert producer.flush(30) == 0
    b = ["--bootstrap-server", broker.bootstrap]

    listed = run_tool("kafka-transactions", [*b, "list"]).stdout
    assert txn_id in listed and "Ongoing" in listed, listed
    described = run_tool("kafka-transactions", [*b, "describe", "--transactional-id", txn_id]).stdout
    assert "Ongoing" in described and f"{topic}-0" in described, described
    producers = run_tool("kafka-transactions", [*b, "describe-producers", "--topic", topic,
                                                "--partition", "0"]).stdout
    lines = [line.split() for line in producers.splitlines() if line.strip()]
    assert lines[0][:2] == ["ProducerId", "ProducerEpoch"], producers
    assert lines[1][-1] == "0", f"the open transaction starts at offset 0:\n{producers}"
    hanging = run_tool("kafka-transactions", [*b, "find-hanging", "--broker-id", "1"]).stdout
    assert txn_id not in hanging, hanging  # known to its coordinator: not hanging

    # An operator's abort writes the ABORT marker at the partition directly.
    run_tool("kafka-transactions", [*b, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0"])
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce(topic, b"after-abort", partition=0)
    assert plain.flush(30) == 0
    assert _read_until(broker, topic, b"after-abort") == [b"after-abort"]


def _described(broker: BrokerProcess, txn_id: str) -> dict:
    with RawConnection(broker.port) as conn:
        [state] = conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [txn_id]})["transaction_states"]
    return state


def test_an_unused_transactional_id_expires(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("txn-expiry", {"transactional.id.expiration.ms": "1000",
                                           "transaction.remove.expired.transaction.cleanup.interval.ms": "200"})
    topic = unique_topic("expiry")
    create_topic(broker.bootstrap, topic, 1)
    txn_id = f"expiry-{topic}"
    producer = _transactional_producer(broker, txn_id)
    producer.begin_transaction()
    producer.produce(topic, b"v", partition=0)
    producer.commit_transaction(30)
    first = _described(broker, txn_id)
    # The commit is answered once PrepareCommit is written; its markers may still be under way.
    assert first["transaction_state"] in ("PrepareCommit", "CompleteCommit")
    deadline = time.monotonic() + 30
    while _described(broker, txn_id)["error_code"] != ErrorCode.TRANSACTIONAL_ID_NOT_FOUND:
        assert time.monotonic() < deadline, "the transactional id never expired"
        time.sleep(0.1)
    assert "expired after 1000 ms without use" in broker.stderr_text()
    # Used again, the id starts over with a new producer id.
    _transactional_producer(broker, txn_id)
    again = _described(broker, txn_id)
    assert again["transaction_state"] == "Empty" and again["producer_id"] != first["producer_id"]


def test_a_transactional_batch_for_a_partition_outside_the_transaction_is_refused(broker: BrokerProcess) -> None:
    """KIP-890 part 1 (KAFKA-14402): the leader asks the coordinator before a producer's first
    transactional batch in a partition; one the transaction does not include is never appended."""
    topic = unique_topic("verify")
    create_topic(broker.bootstrap, topic, 2)
    txn_id = f"verify-{topic}"
    with RawConnection(broker.port) as conn:
        # As clients do: find the coordinator first (which creates __transaction_state).
        assert conn.request(FIND_COORDINATOR, 3, {"key": txn_id, "key_type": 1})["error_code"] == 0
        for _ in range(50):  # the coordinator topic may still be loading
            init = conn.request(INIT_PRODUCER_ID, 4, {"transactional_id": txn_id, "transaction_timeout_ms": 30000,
                                                      "producer_id": -1, "producer_epoch": -1})
            if init["error_code"] == ErrorCode.NONE:
                break
            time.sleep(0.1)
        pid, epoch = init["producer_id"], init["producer_epoch"]
        added = conn.request(ADD_PARTITIONS_TO_TXN, 3, {
            "v3_and_below_transactional_id": txn_id, "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
        assert added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] == 0

        def produce(partition: int, version: int) -> int:
            batch = _rust_log.encode_batch([(None, b"t")], int(time.time() * 1000), producer_id=pid,
                                           producer_epoch=epoch, base_sequence=0, transactional=True)
            body = {**produce_body(topic, partition, batch), "transactional_id": txn_id}
            return produce_partition_response(conn.request(PRODUCE, version, body))["error_code"]

        assert produce(1, 9) == ErrorCode.INVALID_TXN_STATE
        assert produce(1, 11) == ErrorCode.TRANSACTION_ABORTABLE
        assert produce(0, 9) == ErrorCode.NONE
        offsets = conn.request(LIST_OFFSETS, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": 1, "current_leader_epoch": -1, "timestamp": -1}]}]})
        assert offsets["topics"][0]["partitions"][0]["offset"] == 0, "nothing was appended to partition 1"
