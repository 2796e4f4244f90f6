"""Idempotent produce at the protocol level: duplicates, gaps and fenced epochs, as Kafka answers them.

Clients retry a batch whose answer they lost; the broker must answer the retry with the
original offsets and store nothing twice.  Batches are built with explicit producer id, epoch
and sequence so each case is exact.
"""

from __future__ import annotations

import uuid

from compat_tests.broker_process import BrokerProcess
from compat_tests.raw_kafka import RawConnection, batches_in, produce_body, produce_partition_response
from pykafkad._rust_log import encode_batch

PRODUCE, FETCH, INIT_PRODUCER_ID = 0, 1, 22
OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH = 45, 47


def _produce(conn: RawConnection, topic: str, pid: int, epoch: int, seq: int, n: int = 2) -> dict:
    batch = encode_batch([(b"k", b"v%d" % i) for i in range(n)], 1_000, producer_id=pid, producer_epoch=epoch,
                         base_sequence=seq)
    return produce_partition_response(conn.request(PRODUCE, 9, produce_body(topic, 0, batch)))


def test_duplicates_gaps_and_fenced_epochs(broker: BrokerProcess) -> None:
    topic = f"idem-{uuid.uuid4().hex[:8]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(topic)
        init = conn.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                  "producer_id": -1, "producer_epoch": -1})
        assert init["error_code"] == 0
        pid, epoch = init["producer_id"], init["producer_epoch"]

        first = _produce(conn, topic, pid, epoch, 0)
        second = _produce(conn, topic, pid, epoch, 2)
        assert (first["error_code"], first["base_offset"]) == (0, 0)
        assert (second["error_code"], second["base_offset"]) == (0, 2)

        # A retry of either of the last batches gets its original offset back.
        assert (_produce(conn, topic, pid, epoch, 0)["base_offset"]) == 0
        assert (_produce(conn, topic, pid, epoch, 2)["base_offset"]) == 2

        # A gap in the sequence is refused.
        assert _produce(conn, topic, pid, epoch, 7)["error_code"] == OUT_OF_ORDER_SEQUENCE_NUMBER

        # KIP-360: asking again with id and epoch bumps the epoch; the old epoch is fenced.
        bumped = conn.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                    "producer_id": pid, "producer_epoch": epoch})
        assert (bumped["error_code"], bumped["producer_id"], bumped["producer_epoch"]) == (0, pid, epoch + 1)
        assert _produce(conn, topic, pid, epoch + 1, 0)["base_offset"] == 4
        assert _produce(conn, topic, pid, epoch, 4)["error_code"] == INVALID_PRODUCER_EPOCH

        fetched = conn.request(FETCH, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0,
                                           "max_bytes": 1 << 20, "session_epoch": -1,
                                           "topics": [{"topic": topic, "partitions": [
                                               {"partition": 0, "fetch_offset": 0,
                                                "partition_max_bytes": 1 << 20}]}]})
    records = fetched["responses"][0]["partitions"][0]["records"]
    assert batches_in(bytes(records)) == [(0, 2), (2, 2), (4, 2)], "each batch stored once"

    # Producer state survives a restart: the retry is still recognised.
    broker.restart()
    with RawConnection(broker.port) as conn:
        assert _produce(conn, topic, pid, epoch + 1, 0)["base_offset"] == 4
