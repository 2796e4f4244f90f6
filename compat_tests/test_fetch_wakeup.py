"""A long-polling fetch is woken by an append to the partition it waits on, and only answers then.

The fetch waits up to 60 s, longer than the raw connection's receive timeout, so a missed wake-up
fails the test instead of answering late.  An append to another partition of the topic does not
answer it.  With `compression.type=gzip` the broker recompresses, which runs the append on a
worker thread: the wake-up must come from there too.
"""

from __future__ import annotations

import select

import pytest

import wire
from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.raw_kafka import RawConnection, batches_in, produce_body, produce_partition_response, record_batch

FETCH = 1
LONG_POLL_MS = 60_000


def _long_poll(topic: str, partition: int) -> bytes:
    body = {"replica_id": -1, "max_wait_ms": LONG_POLL_MS, "min_bytes": 1, "max_bytes": 1 << 20,
            "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": 0,
                                                       "partition_max_bytes": 1 << 20}]}]}
    return wire.encode_request(FETCH, 12, 7, "wakeup", body)


@pytest.mark.parametrize("compression", ["producer", "gzip"])
def test_long_poll_answers_when_its_partition_gets_data(broker: BrokerProcess, compression: str) -> None:
    topic = unique_topic(f"wakeup-{compression}")
    with RawConnection(broker.port) as waiting, RawConnection(broker.port) as producer:
        producer.create_topic(topic, partitions=2, configs={"compression.type": compression})
        waiting.send(_long_poll(topic, 1))

        other = producer.request(0, 9, produce_body(topic, 0, record_batch([b"elsewhere"], 1_000)))
        assert produce_partition_response(other)["error_code"] == 0
        # The fetch must still be waiting: partition 0's append is not its data.
        readable, _, _ = select.select([waiting.sock], [], [], 0)
        assert not readable, "the long poll answered on another partition's append"

        ours = producer.request(0, 9, produce_body(topic, 1, record_batch([b"a", b"b"], 1_000)))
        assert produce_partition_response(ours)["error_code"] == 0
        frame = waiting.recv_frame()
    assert frame is not None, "the long poll was not woken by its partition's append"
    correlation_id, fetched = wire.decode_response(FETCH, 12, frame)
    assert correlation_id == 7
    [part] = fetched["responses"][0]["partitions"]
    assert (part["error_code"], part["high_watermark"]) == (0, 2)
    assert batches_in(part["records"]) == [(0, 2)]
