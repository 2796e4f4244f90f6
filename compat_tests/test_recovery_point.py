"""Recovery points (Kafka's ``recovery-point-offset-checkpoint``), proven against a broker process.

* Periodic checkpoint: with a short ``log.flush.offset.checkpoint.interval.ms`` the broker fsyncs the
  segments it rolled and names each partition in its log dir's checkpoint at its active segment's base
  offset.  Killed with ``kill -9`` and with the last batch of one partition torn, it restarts having
  re-read only the segment after the recovery point (its log says which, and how many of all), keeps
  every acknowledged record of the intact partition, and still cuts the torn tail of the other.
* Clean shutdown: the checkpoint written at shutdown holds each log's end; records appended after the
  restart roll several segments and are never flushed (the interval is an hour), so after ``kill -9``
  exactly the segments from the recovery point on are recovered, not the older ones.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, Rec, create_topic, unique_topic
from compat_tests.storage_support import segment_bases, segment_files, wait_for
from pykafkad._rust_log import decode_batch_headers
from pykafkad.log.recovery_checkpoint import RECOVERY_POINT_FILE, read_recovery_points

RECORDS = 600
SEGMENT = {"internal.segment.bytes": "16384"}
PRODUCE = {"batch.size": 1000, "linger.ms": 5}


def _values(tag: str, n: int, start: int = 0) -> list[bytes]:
    return [f"{tag}-{i:05d}-".encode() + b"v" * 120 for i in range(start, start + n)]


def _recovered(log: str, topic: str, partition: int) -> list[str]:
    """The segments the broker log says were recovered for one partition."""
    return [line for line in log.splitlines()
            if f"recovery of {topic}-{partition}:" in line and "recovered segment" in line]


def _expected_recovered(part: Path, point: int) -> list[int]:
    """Base offsets of the segment holding ``point`` and every later one (Kafka's unflushed segments)."""
    bases = segment_bases(part)
    first = max(i for i, b in enumerate(bases) if b <= point) if bases[0] <= point else 0
    return bases[first:]


def _log_dir(b: BrokerProcess, topic: str) -> Path:
    return b.partition_dir(topic, 0).parent


def test_periodic_checkpoint_bounds_recovery_and_torn_tail_still_cut(broker_factory: Any) -> None:
    b = broker_factory("rpoint", {"auto.create.topics.enable": "false",
                                  "log.flush.offset.checkpoint.interval.ms": "200"})
    topic = unique_topic("rpoint")
    create_topic(b.bootstrap, topic, partitions=2, config=SEGMENT)
    client = ConfluentClient(b.bootstrap)
    sent = {p: _values(f"p{p}", RECORDS) for p in (0, 1)}
    for p, values in sent.items():
        assert client.produce(topic, [Rec(v, None, partition=p) for v in values], **PRODUCE) == list(range(RECORDS))
    actives = {p: segment_bases(b.partition_dir(topic, p))[-1] for p in (0, 1)}
    assert min(actives.values()) > 0, "the partitions did not roll"

    def checkpointed() -> dict[tuple[str, int], int] | None:
        points = read_recovery_points(_log_dir(b, topic))
        return points if all(points.get((topic, p)) == actives[p] for p in (0, 1)) else None

    points = wait_for("the checkpoint names each partition at its active segment", checkpointed)
    b.kill9()

    # Partition 1: its last batch torn in half, after the recovery point.
    active1 = segment_files(b.partition_dir(topic, 1))[-1]
    data = active1.read_bytes()
    pos = 0
    headers = decode_batch_headers(data)
    for h in headers[:-1]:
        pos += int(h["size"])
    torn_base = int(headers[-1]["base_offset"])
    assert torn_base >= points[(topic, 1)]
    with open(active1, "r+b") as f:
        f.truncate(pos + int(headers[-1]["size"]) // 2)

    mark = b.stderr_size()
    b.start()
    log = b.stderr_text()[mark:]
    for p in (0, 1):
        got = _recovered(log, topic, p)
        want = _expected_recovered(b.partition_dir(topic, p), points[(topic, p)])
        assert len(got) == len(want) == 1, f"partition {p}: {got}\n{log[-3000:]}"
        assert f"{want[0]:020d}.log" in got[0], got
        assert len(segment_bases(b.partition_dir(topic, p))) > 3
    assert "truncated" in _recovered(log, topic, 1)[0]
    summary = re.search(r"unclean shutdown: recovered (\d+) of (\d+) segments", log)
    assert summary and int(summary.group(1)) < int(summary.group(2)), log[-3000:]

    got0 = client.consume(topic, 0, "earliest", RECORDS)
    assert [(g.offset, g.value) for g in got0] == list(enumerate(sent[0]))
    assert client.offsets(topic, 1) == (0, torn_base)
    got1 = client.consume(topic, 1, "earliest", torn_base)
    assert [(g.offset, g.value) for g in got1] == list(enumerate(sent[1][:torn_base]))
    assert client.produce(topic, [Rec(b"after", None, partition=1)]) == [torn_base]


def test_checkpoint_of_a_clean_shutdown_then_kill9(broker_factory: Any) -> None:
    b = broker_factory("rpoint-clean", {"auto.create.topics.enable": "false",
                                        "log.flush.offset.checkpoint.interval.ms": "3600000"})
    topic = unique_topic("rpoint-clean")
    create_topic(b.bootstrap, topic, config=SEGMENT)
    client = ConfluentClient(b.bootstrap)
    first = _values("a", RECORDS)
    assert client.produce(topic, [Rec(v, None) for v in first], **PRODUCE) == list(range(RECORDS))
    b.restart()
    points = read_recovery_points(_log_dir(b, topic))
    assert points.get((topic, 0)) == RECORDS, points
    assert (_log_dir(b, topic) / RECOVERY_POINT_FILE).read_text().startswith("0\n")

    more = _values("b", RECORDS, RECORDS)
    assert client.produce(topic, [Rec(v, None) for v in more], **PRODUCE) == list(range(RECORDS, 2 * RECORDS))
    b.kill9()
    part = b.partition_dir(topic, 0)
    want = _expected_recovered(part, RECORDS)
    total = len(segment_bases(part))
    assert 1 < len(want) < total, (want, total)

    mark = b.stderr_size()
    b.start()
    got = _recovered(b.stderr_text()[mark:], topic, 0)
    assert sorted(int(re.search(r"(\d{20})\.log", line).group(1)) for line in got) == want, got
    records = client.consume(topic, 0, "earliest", 2 * RECORDS)
    assert [(g.offset, g.value) for g in records] == list(enumerate(first + more))



def test_first_checkpoint_pass_after_kafkas_initial_task_delay() -> None:
    """Kafka first checkpoints recovery points log.initial.task.delay.ms (30 s) after start, then every
    log.flush.offset.checkpoint.interval.ms: the housekeeper's schedule, on trio's virtual clock."""
    import trio
    import trio.testing

    from pykafkad.config import LONG_MAX
    from pykafkad.log.housekeeping import LogHousekeeper

    config: Any = {"log.flush.offset.checkpoint.interval.ms": 60000, "log.retention.check.interval.ms": 10**9,
                   "log.cleaner.enable": False, "log.flush.scheduler.interval.ms": LONG_MAX,
                   "producer.id.expiration.check.interval.ms": 10**9}
    logs: Any = type("NoLogs", (), {"logs": {}, "topic_settings": {}})()
    housekeeper = LogHousekeeper(config, logs)
    runs: list[float] = []

    async def main() -> None:
        async def checkpoint_pass() -> None:
            runs.append(trio.current_time())
            if len(runs) == 3:
                nursery.cancel_scope.cancel()

        housekeeper.recovery_point_pass = checkpoint_pass  # type: ignore[method-assign]
        async with trio.open_nursery() as nursery:
            await nursery.start(housekeeper.run)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert runs == [30.0, 90.0, 150.0]
