"""The REST proxy's producer when a partition has no leader or its leader is unreachable: those
batches wait for the next round while the others are sent (a partition without a leader once made
the round loop forever on the batches it put back).  The cluster test
(cluster_tests/test_rest_proxy_cluster.py) does the same against brokers killed for real."""

from __future__ import annotations

import time
from typing import Any

import trio

from pykafkad.rest_proxy.network_client import TopicLayout, Unreachable
from pykafkad.rest_proxy.record_producer import (
    Delivery,
    OutgoingRecord,
    RecordProducer,
    _Attempt,
    _encode,
)
from wire.error_codes import ErrorCode


class _Network:
    """The producer's network client, answering from a fixed layout; broker 7 is down."""

    def __init__(self, layout: TopicLayout) -> None:
        self._layout = layout
        self.sent: list[tuple[int, list[int]]] = []

    def layout(self, topic: str) -> TopicLayout:
        return self._layout

    def forget(self, topic: str) -> None:
        pass

    async def send(self, node: int, api_key: int, body: dict[str, Any], max_version: int | None = None) -> Any:
        if node == 7:
            raise Unreachable("broker 7 is down")
        partitions = [p["index"] for t in body["topic_data"] for p in t["partition_data"]]
        self.sent.append((node, partitions))

        async def answer() -> dict[str, Any]:
            return {"responses": [{"name": "t", "partition_responses": [
                {"index": p, "error_code": 0, "base_offset": 10 * p, "log_append_time_ms": -1} for p in partitions]}]}
        return answer


def test_batches_without_a_reachable_leader_wait_for_the_next_round() -> None:
    producer = RecordProducer({"bootstrap.servers": "127.0.0.1:9"})
    network = _Network(TopicLayout(0, {0: -1, 1: 5, 2: 7, 3: 5}))
    producer._network = network  # type: ignore[assignment]
    records = [OutgoingRecord(p, None, b"v") for p in (0, 1, 2, 3, 1)]
    delivery = Delivery(len(records))
    batches = [_encode(p, [i for i, r in enumerate(records) if r.partition == p],
                       [r for r in records if r.partition == p], 1) for p in (0, 1, 2, 3)]
    attempt = _Attempt("t", delivery, batches, time.monotonic() + 30, 0)

    async def main() -> None:
        written = await producer._write(attempt)
        assert network.sent == [(5, [1, 3])]
        # Partition 0 (no leader) and 2 (its leader unreachable) wait for the next round.
        assert sorted(b.partition for b in attempt.batches) == [0, 2]
        assert attempt.last_error is not None and attempt.last_error.retriable
        for request in written:
            await producer._settle(attempt, request)
        outcomes = delivery._outcomes
        assert [(o.partition, o.offset) if o else None for o in outcomes] == [None, (1, 10), None, (3, 30), (1, 11)]
        attempt.fail_all(producer_error := attempt.last_error)
        assert [o.error for o in delivery._outcomes if o and o.error] == [producer_error, producer_error]
        assert producer_error.code in (ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.NETWORK_EXCEPTION)

    trio.run(main)
