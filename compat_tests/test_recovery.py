"""Crash recovery of the on-disk log, proven with real clients against a broker process.

* Corruption: after `kill -9`, one partition's active segment is cut in the middle of its last
  batch, another's has bytes flipped inside a batch in its middle, a third is left alone.  On
  restart the broker truncates each damaged log to its last valid batch, says in its log what
  it cut, serves every record before the cut (kafka-python and confluent-kafka read them at
  their offsets), and appends new records right after it.
* Kill during cleaning: a compacted topic with tiny segments and a cleaner that runs every
  50 ms takes overwrites while the broker is killed with SIGKILL at several moments; after each
  restart the newest acknowledged value of every key is still there (or a newer write of that
  key), nothing foreign appears, every file an interrupted cleaning left is rolled back or
  completed at start-up (and the broker log says so), and once the cleaner has run on
  the final state the topic holds exactly the newest value per key.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, KafkaPythonClient, Rec, create_topic, unique_topic
from compat_tests.storage_support import disk_records, segment_files, wait_for
from pykafkad._rust_log import decode_batch_headers

RECORDS = 400


def _batches(segment: Path) -> list[tuple[int, int, int]]:
    """(file position, size, base offset) of each batch in a segment file."""
    out, pos = [], 0
    for h in decode_batch_headers(segment.read_bytes()):
        out.append((pos, int(h["size"]), int(h["base_offset"])))
        pos += int(h["size"])
    return out


def _stderr_since(b: BrokerProcess, mark: int) -> str:
    return b.stderr_text()[mark:]


@pytest.mark.compat_timeout(180)
def test_corrupt_segments_truncated_to_last_valid_batch(broker_factory: Any) -> None:
    b = broker_factory("recovery", {"auto.create.topics.enable": "false"})
    topic = unique_topic("corrupt")
    create_topic(b.bootstrap, topic, partitions=3, config={"internal.segment.bytes": "16384"})
    client = ConfluentClient(b.bootstrap)
    sent: dict[int, list[bytes]] = {}
    for p in range(3):
        sent[p] = [f"p{p}-{i:05d}-".encode() + os.urandom(40).hex().encode() for i in range(RECORDS)]
        offsets = client.produce(topic, [Rec(v, f"k{i}".encode(), partition=p) for i, v in enumerate(sent[p])],
                                 **{"batch.size": 1000, "linger.ms": 20})
        assert offsets == list(range(RECORDS))
    b.kill9()

    # Partition 0: the active segment ends half-way through its last batch (a torn write).
    active0 = segment_files(b.partition_dir(topic, 0))[-1]
    pos, size, cut_end0 = _batches(active0)[-1]
    with open(active0, "r+b") as f:
        f.truncate(pos + size // 2)
    # Partition 1: a byte flipped inside a batch in the middle of the active segment (CRC mismatch).
    active1 = segment_files(b.partition_dir(topic, 1))[-1]
    batches1 = _batches(active1)
    assert len(batches1) >= 4, f"active segment of partition 1 has only {len(batches1)} batches"
    pos, size, cut_end1 = batches1[len(batches1) // 2]
    with open(active1, "r+b") as f:
        f.seek(pos + size - 10)  # inside the records, which the CRC covers
        byte = f.read(1)
        f.seek(pos + size - 10)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert 0 < cut_end0 < RECORDS and 0 < cut_end1 < RECORDS - 1

    mark = b.stderr_size()
    b.start()
    log = _stderr_since(b, mark)
    for p, path in ((0, active0), (1, active1)):
        lines = [line for line in log.splitlines() if f"recovery of {topic}-{p}:" in line]
        assert any("truncated" in line and path.name in line for line in lines), (
            f"partition {p}: the broker log does not say what recovery cut:\n{log[-3000:]}")
        print(f"partition {p}: {lines}")
    started = re.search(r"pykafkad started in ([\d.]+)s", log)
    print(f"restart after corruption: {started.group(0) if started else '?'}")

    ends = {0: cut_end0, 1: cut_end1, 2: RECORDS}
    for p, end in ends.items():
        assert client.offsets(topic, p) == (0, end), f"partition {p}"
        got = client.consume(topic, p, "earliest", end)
        assert [(g.offset, g.value) for g in got] == list(enumerate(sent[p][:end])), f"partition {p}"
    # Reads from the middle use the rebuilt indexes; kafka-python agrees.
    mid = cut_end1 // 2
    got = KafkaPythonClient(b.bootstrap).consume(topic, 1, mid, cut_end1 - mid)
    assert [(g.offset, g.value) for g in got] == list(enumerate(sent[1][:cut_end1]))[mid:]
    # New records continue right after the cut, and everything survives a clean restart.
    for p, end in ends.items():
        assert client.produce(topic, [Rec(b"after", b"k", partition=p)]) == [end]
    b.restart()
    for p, end in ends.items():
        assert client.offsets(topic, p) == (0, end + 1)
    assert "recovery of" not in _stderr_since(b, b.stderr_text().rfind("===== start"))


KEYS = 150


def _consume_all(bootstrap: str, topic: str) -> list[tuple[int, bytes, bytes | None]]:
    """Every record of partition 0 from the log start to the end: (offset, key, value)."""
    lo, hi = ConfluentClient(bootstrap).offsets(topic)
    consumer = ConfluentClient(bootstrap).consumer(**{"enable.partition.eof": True})
    out: list[tuple[int, bytes, bytes | None]] = []
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF and m.offset() >= hi:
                    return out
                assert m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF, m.error()
                continue
            out.append((m.offset(), m.key(), m.value()))
    finally:
        consumer.close()
    raise AssertionError(f"did not reach offset {hi} of {topic} within 60s ({len(out)} records read)")


def _produce_until_killed(b: BrokerProcess, topic: str, tag: str, kill_after_cleans: int,
                          rng: random.Random) -> tuple[dict[bytes, tuple[int, bytes]], set[bytes], int]:
    """Overwrite keys with acks=all until the cleaner has logged `kill_after_cleans` more passes
    (plus a random delay), then SIGKILL the broker.  Returns (newest acked per key, values sent,
    cleaner passes seen)."""
    acked: dict[bytes, tuple[int, bytes]] = {}
    sent: set[bytes] = set()
    lock = threading.Lock()
    producer = confluent_kafka.Producer({
        "bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 5, "batch.size": 4000,
        "message.timeout.ms": 5000, "socket.timeout.ms": 3000, "reconnect.backoff.max.ms": 200,
    })

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            with lock:
                old = acked.get(msg.key())
                if old is None or old[0] < msg.offset():
                    acked[msg.key()] = (msg.offset(), msg.value())

    mark = b.stderr_size()

    def cleans() -> int:
        return _stderr_since(b, mark).count("log.housekeeping: cleaned")

    i = 0
    kill_at: float | None = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        value = f"{tag}-{i:07d}-".encode() + b"v" * 80
        try:
            producer.produce(topic, value=value, key=f"key{i % KEYS}".encode(), on_delivery=on_delivery)
        except BufferError:
            producer.poll(0.05)
            continue
        sent.add(value)
        i += 1
        producer.poll(0)
        if i % 50 == 0:
            time.sleep(0.02)  # at most a few thousand records a second: many segments, not gigabytes
            if kill_at is None and cleans() >= kill_after_cleans:
                kill_at = time.monotonic() + rng.uniform(0, 0.3)
            if kill_at is not None and time.monotonic() >= kill_at:
                break
    passes = cleans()
    assert kill_at is not None, f"the cleaner ran only {passes} times within 60 s\n{b.stderr_tail()}"
    b.kill9()
    producer.flush(15)
    return acked, sent, passes


@pytest.mark.compat_timeout(240)
def test_kill9_during_cleaning_loses_nothing(broker_factory: Any) -> None:
    b = broker_factory("cleankill", {"auto.create.topics.enable": "false", "log.cleaner.backoff.ms": "50",
                                     "log.retention.check.interval.ms": "200",
                                     "offsets.topic.num.partitions": "1"})
    topic = unique_topic("cleankill")
    create_topic(b.bootstrap, topic, config={"cleanup.policy": "compact", "internal.segment.bytes": "8192",
                                             "segment.ms": "300", "min.cleanable.dirty.ratio": "0.01"})
    part = b.partition_dir(topic)
    rng = random.Random(9)
    newest: dict[bytes, tuple[int, bytes]] = {}
    sent: set[bytes] = set()
    evidence: list[str] = []
    mid_clean_kills = 0
    for round_ in range(5):
        acked, round_sent, passes = _produce_until_killed(b, topic, f"r{round_}", 2 + round_, rng)
        sent |= round_sent
        for k, (o, v) in acked.items():
            if k not in newest or newest[k][0] < o:
                newest[k] = (o, v)
        leftovers = sorted(p.name for p in part.iterdir() if p.suffix in (".cleaned", ".swap"))
        mark = b.stderr_size()
        b.start()
        report = [line.split(": ", 2)[-1] for line in _stderr_since(b, mark).splitlines() if "recovery of" in line]
        evidence += report
        # The killed cleaner's files are rolled back or completed at start-up, and the broker says so.
        # ("<base>.log.swap" is reported as "completed interrupted cleaner swap of segment <base>.log").
        unhandled = [name for name in leftovers if not any(name.split(".")[0] in line for line in report)]
        assert not unhandled, f"round {round_}: cleaner leftovers not handled at start-up: {unhandled}"
        mid_clean_kills += bool(leftovers)
        print(f"round {round_}: {len(acked)} keys acked, {passes} cleaner passes before the kill, "
              f"{len(leftovers)} cleaner files left by the kill")

        log = _consume_all(b.bootstrap, topic)
        offsets = [o for o, _, _ in log]
        assert offsets == sorted(set(offsets)), f"round {round_}: offsets out of order or repeated"
        foreign = [o for o, _, v in log if v not in sent]
        assert not foreign, f"round {round_}: records nobody sent at {foreign[:5]}"
        last: dict[bytes, tuple[int, bytes | None]] = {k: (o, v) for o, k, v in log}
        for key, (o, v) in newest.items():
            assert key in last, f"round {round_}: key {key!r} (acked at {o}) is gone"
            lo, lv = last[key]
            assert lo >= o, f"round {round_}: key {key!r}: newest record at {lo}, acknowledged write at {o}"
            if lo == o:
                assert lv == v, f"round {round_}: key {key!r} at {o}: {lv!r} != acknowledged {v!r}"
    print(f"{mid_clean_kills} of 5 kills interrupted a cleaning; recovery actions seen:", *evidence[:10], sep="\n  ")

    # A last complete round without a kill: the cleaner converges on exactly the newest value per key.
    final = ConfluentClient(b.bootstrap).produce(
        topic, [Rec(f"final-{k}".encode(), f"key{k}".encode()) for k in range(KEYS)], **{"batch.size": 4000})
    want = sorted((o, f"key{k}".encode(), f"final-{k}".encode()) for k, o in enumerate(final))

    def converged() -> bool:
        recs = disk_records(part)
        return recs == want

    wait_for("the cleaner converges on the newest value per key", converged)
    assert _consume_all(b.bootstrap, topic) == want
