"""Crash durability: under acks=all load, `kill -9` the broker, restart it on the same log
directory, and check that every acknowledged record is there at its acknowledged offset with
the same value, that nothing foreign appeared, and that new records continue after them."""

from __future__ import annotations

import os
import time
from typing import Any

import confluent_kafka
import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, Rec, create_topic, unique_topic

PARTITIONS = 3
ACKS_BEFORE_KILL = 4500
VALUE_PAD = 900
LOAD_DEADLINE_S = 60.0


def _load_then_kill(
    b: BrokerProcess, topic: str, tag: str
) -> tuple[dict[tuple[int, int], bytes], set[bytes]]:
    """Produce with acks=all until ACKS_BEFORE_KILL acks, SIGKILL the broker mid-stream, drain.

    Returns ({(partition, offset): value} of every acknowledged record, every value sent).
    """
    acked: dict[tuple[int, int], bytes] = {}
    failures: list[Any] = []
    sent: set[bytes] = set()
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": b.bootstrap,
            "acks": "all",
            "linger.ms": 2,
            "message.timeout.ms": 6000,
            "socket.timeout.ms": 5000,
            "queue.buffering.max.messages": 20000,
            "reconnect.backoff.max.ms": 500,
        }
    )

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acked[(msg.partition(), msg.offset())] = msg.value()
        else:
            failures.append(err)

    pad = os.urandom(VALUE_PAD // 2).hex()
    i = 0
    killed = False
    stop_at = 0
    deadline = time.monotonic() + LOAD_DEADLINE_S
    while time.monotonic() < deadline:
        value = f"{tag}-{i:07d}-{pad}".encode()
        try:
            producer.produce(
                topic, value=value, key=str(i).encode(), partition=i % PARTITIONS, on_delivery=on_delivery
            )
        except BufferError:
            producer.poll(0.05)
            continue
        sent.add(value)
        i += 1
        producer.poll(0)
        if not killed and len(acked) >= ACKS_BEFORE_KILL:
            b.kill9()  # records are still in flight: some written, some not, none acknowledged after this
            killed = True
            stop_at = i + 300
        if killed and i >= stop_at:
            break
    assert killed, f"only {len(acked)} acks within {LOAD_DEADLINE_S}s of load\n{b.stderr_tail()}"
    left = producer.flush(20)
    assert left == 0, f"{left} messages neither delivered nor failed 20 s after the broker died"
    assert failures, "expected the records sent after kill -9 to fail"
    return acked, sent


def _read_partition(b: BrokerProcess, topic: str, partition: int) -> tuple[int, dict[int, bytes]]:
    client = ConfluentClient(b.bootstrap)
    lo, hi = client.offsets(topic, partition)
    assert lo == 0, f"partition {partition} log start offset {lo} after restart"
    got = client.consume(topic, partition, "earliest", count=hi, timeout=60) if hi else []
    by_offset = {g.offset: g.value for g in got}
    assert sorted(by_offset) == list(range(hi)), f"partition {partition}: offsets not contiguous 0..{hi - 1}"
    return hi, by_offset


def _verify(b: BrokerProcess, topic: str, acked: dict[tuple[int, int], bytes], sent: set[bytes]) -> list[int]:
    ends = []
    for p in range(PARTITIONS):
        hi, log = _read_partition(b, topic, p)
        mine = {o: v for (q, o), v in acked.items() if q == p}
        assert mine, f"no acknowledged records on partition {p}"
        assert hi >= max(mine) + 1, f"partition {p}: log ends at {hi}, acknowledged up to {max(mine)}"
        lost = [o for o in mine if o not in log]
        assert not lost, f"partition {p}: {len(lost)} acknowledged records lost, e.g. offsets {lost[:5]}"
        changed = [o for o, v in mine.items() if log[o] != v]
        assert not changed, f"partition {p}: acknowledged records changed at offsets {changed[:5]}"
        foreign = [o for o, v in log.items() if v not in sent]
        assert not foreign, f"partition {p}: records nobody sent at offsets {foreign[:5]}"
        ends.append(hi)
    return ends


@pytest.mark.compat_timeout(300)
def test_kill9_under_acks_all_load_loses_no_acknowledged_record(broker_factory: Any) -> None:
    b = broker_factory("durability", {"log.segment.bytes": "1048576", "auto.create.topics.enable": "false"})
    topic = unique_topic("durable")
    create_topic(b.bootstrap, topic, PARTITIONS)

    acked, sent = _load_then_kill(b, topic, "round1")
    assert not b.is_alive()
    b.start()
    ends = _verify(b, topic, acked, sent)

    segments = [len(list(b.partition_dir(topic, p).glob("*.log"))) for p in range(PARTITIONS)]
    assert max(segments) >= 2, f"log.segment.bytes=1048576 but segments per partition are {segments}"

    # New records continue right after what survived.
    client = ConfluentClient(b.bootstrap)
    for p in range(PARTITIONS):
        new = [Rec(f"after-crash-{p}-{j}".encode(), None, partition=p) for j in range(5)]
        assert client.produce(topic, new) == list(range(ends[p], ends[p] + 5))

    # A second crash on top of a recovered log.
    acked2, sent2 = _load_then_kill(b, topic, "round2")
    b.start()
    for p in range(PARTITIONS):
        for j in range(5):
            acked2[(p, ends[p] + j)] = f"after-crash-{p}-{j}".encode()
            sent2.add(f"after-crash-{p}-{j}".encode())
    acked2.update(acked)
    _verify(b, topic, acked2, sent | sent2)
    assert client.offsets(topic, 0)[1] >= ends[0] + 5
    b.stop()  # a recovered broker still shuts down cleanly
