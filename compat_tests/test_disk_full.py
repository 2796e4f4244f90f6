"""A full log dir, on a real full filesystem: a small tmpfs mounted as the broker's only log dir.

A kafka-python producer (acks=all, no retries, so each answer is seen) fills the disk until the broker
answers KAFKA_STORAGE_ERROR (56).  Then:

* every acknowledged record is still readable at its offset, and the log end offset did not move for
  the refused appends (no half-written batch counted);
* ``/readyz`` is 503 naming the full dir, ``/metrics`` has ``kafka_log_logmanager_offlinelogdirectorycount``
  1 and ``kafka_log_logmanager_logdirectoryoffline{logDirectory=...}`` 1 for it, and the broker log has
  a WARN naming it;
* a filler file placed on the same filesystem beforehand is deleted: produce resumes without a restart,
  at the next offset, and ``/readyz`` and the gauges clear;
* after ``kill -9`` and a restart, every acknowledged record (before and after the full disk) is read
  back once, in order, from segment files whose batches all decode (CRC-checked).

Mounting needs root (CAP_SYS_ADMIN); the test skips saying so when the mount is refused.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.clients import KafkaPythonClient, create_topic, unique_topic
from compat_tests.storage_support import disk_records, mounted_small_fs, wait_for

FILLER_BYTES = 2 * 1024 * 1024
VALUE_BYTES = 2000
BATCH = 50




@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    yield from mounted_small_fs(tmp_path)



class FullDiskBroker:
    def __init__(self, fs: Path, work: Path) -> None:
        self.http_port = free_port()
        self.log_dir = fs / "logs"
        self.broker = BrokerProcess(self.log_dir, {"metrics.listener": f"http://127.0.0.1:{self.http_port}",
                                                   "auto.create.topics.enable": "false",
                                                   "num.partitions": "1"}, name="diskfull")
        # The broker's own output stays off the filesystem it fills.
        self.broker.stderr_path = work / "diskfull.stderr.log"

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def gauges(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        status, body = self.get("/metrics")
        assert status == 200
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(body) for s in family.samples}

    def offline_gauges(self) -> tuple[float | None, float | None]:
        """(offline log dir count, this log dir's offline gauge)."""
        gauges = self.gauges()
        return (gauges.get(("kafka_log_logmanager_offlinelogdirectorycount", ())),
                gauges.get(("kafka_log_logmanager_logdirectoryoffline", (("logDirectory", str(self.log_dir)),))))


def _send(producer: object, topic: str, values: list[bytes]) -> list[tuple[bytes, int | None, Exception | None]]:
    """Each value with its acknowledged offset, or the error its batch got."""
    futures = [producer.send(topic, value=v, partition=0) for v in values]  # type: ignore[attr-defined]
    producer.flush(timeout=30)  # type: ignore[attr-defined]
    out: list[tuple[bytes, int | None, Exception | None]] = []
    for v, f in zip(values, futures, strict=True):
        try:
            out.append((v, f.get(timeout=30).offset, None))
        except Exception as e:  # noqa: BLE001 - the error is what the test looks at
            out.append((v, None, e))
    return out


def _whole_batches(part_dir: Path) -> None:
    """Every segment file holds whole batches only: no bytes of a refused append are left at its end."""
    for seg in sorted(part_dir.glob("*.log")):
        data = seg.read_bytes()
        pos = 0
        while pos + 12 <= len(data):
            pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        assert pos == len(data), f"{seg.name}: {len(data) - pos} bytes after its last whole batch"


def _read_all(bootstrap: str, topic: str, count: int) -> list[tuple[int, bytes]]:
    got = KafkaPythonClient(bootstrap).consume(topic, 0, "earliest", count=count, timeout=30,
                                               max_partition_fetch_bytes=1024 * 1024)
    return [(g.offset, g.value) for g in got]


@pytest.mark.compat_timeout(120)
def test_full_log_dir_refuses_produce_keeps_acked_records_and_resumes(small_fs: Path, tmp_path: Path) -> None:
    filler = small_fs / "filler"
    filler.write_bytes(b"\xff" * FILLER_BYTES)
    server = FullDiskBroker(small_fs, tmp_path)
    b = server.broker
    try:
        b.start()
        topic = unique_topic("full")
        create_topic(b.bootstrap, topic, partitions=1, config={"segment.bytes": str(1024 * 1024)})
        client = KafkaPythonClient(b.bootstrap)
        producer = client.producer(acks="all", retries=0, linger_ms=5, batch_size=16384,
                                   max_in_flight_requests_per_connection=1)
        acked: dict[int, bytes] = {}
        errors: list[Exception] = []
        n = 0
        try:
            for _ in range(200):  # 8 MB / 100 KB a round: the disk is full long before
                values = [f"r{n + i:07d}-".encode() + b"x" * VALUE_BYTES for i in range(BATCH)]
                n += BATCH
                for v, offset, err in _send(producer, topic, values):
                    if err is None:
                        assert offset is not None and offset not in acked
                        acked[offset] = v
                    else:
                        errors.append(err)
                if errors:
                    break
            assert errors, f"the disk never filled: {len(acked)} records acknowledged"
            names = {type(e).__name__ for e in errors}
            assert names == {"KafkaStorageError"}, f"a full disk answered {names}, not KAFKA_STORAGE_ERROR"
            assert sorted(acked) == list(range(len(acked))), "acknowledged offsets have a gap"

            # Refused appends did not move the log end offset, and reads keep working.
            assert client.offsets(topic) == (0, len(acked))
            _whole_batches(b.partition_dir(topic, 0))
            assert _read_all(b.bootstrap, topic, len(acked)) == sorted(acked.items())

            # Which dir is full: /readyz, the gauges, one WARN line.
            status, body = server.get("/readyz")
            assert status == 503 and str(server.log_dir) in body, body
            assert server.offline_gauges() == (1.0, 1.0)
            warns = [line for line in b.stderr_text().splitlines()
                     if "WARN" in line and str(server.log_dir) in line and "full" in line]
            assert warns, b.stderr_tail()

            # Space returns: produce resumes at the next offset, without a restart.
            filler.unlink()

            def resumed() -> list[tuple[bytes, int | None, Exception | None]] | None:
                values = [f"after{time.monotonic_ns()}-{i}".encode() for i in range(5)]
                sent = _send(producer, topic, values)
                return sent if all(err is None for _, _, err in sent) else None

            later = wait_for("produce to resume after space returned", resumed, timeout=30)
            assert [off for _, off, _ in later] == list(range(len(acked), len(acked) + 5))
            for v, off, _ in later:
                acked[off] = v  # type: ignore[index]
            wait_for("/readyz to clear", lambda: server.get("/readyz")[0] == 200, timeout=30)
            assert server.offline_gauges() == (0.0, 0.0)
        finally:
            producer.close(timeout=10)

        # kill -9, restart: every acknowledged record is there once, the segments all decode.
        b.kill9()
        b.start()
        assert _read_all(b.bootstrap, topic, len(acked)) == sorted(acked.items())
        _whole_batches(b.partition_dir(topic, 0))
        on_disk = [(off, v) for off, _k, v in disk_records(b.partition_dir(topic, 0))]  # CRCs checked
        assert on_disk == sorted(acked.items())
    finally:
        b.close()


@pytest.mark.compat_timeout(120)
def test_full_log_dir_takes_only_its_partitions_offline(small_fs: Path, tmp_path: Path) -> None:
    """Two log.dirs, one on the small filesystem: once it is full, the partition in the other dir still
    takes produce, the group coordinator (its __consumer_offsets partition in the other dir) still
    commits, and /readyz names only the full dir."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    roomy = tmp_path / "roomy"
    full_dir = small_fs / "logs"
    server = FullDiskBroker(small_fs, tmp_path)
    b = server.broker
    # The roomy dir first: on a tie a new partition goes to the first dir.
    b.overrides.update({"log.dirs": f"{roomy},{full_dir}", "offsets.topic.num.partitions": "1"})
    b.log_dir = roomy
    (small_fs / "filler").write_bytes(b"\xff" * FILLER_BYTES)
    group = unique_topic("g")

    def commit(topic: str, offset: int) -> int | None:
        consumer = KafkaConsumer(bootstrap_servers=b.bootstrap, group_id=group, enable_auto_commit=False,
                                 request_timeout_ms=20000)
        try:
            tp = TopicPartition(topic, 1)
            consumer.commit({tp: OffsetAndMetadata(offset, "", -1)})
            return consumer.committed(tp)
        finally:
            consumer.close()

    try:
        b.start()
        warmup = unique_topic("warm")
        create_topic(b.bootstrap, warmup, partitions=2)
        assert commit(warmup, 1) == 1  # __consumer_offsets-0 is created now, in the roomy dir
        assert (roomy / "__consumer_offsets-0").is_dir()
        topic = unique_topic("split")
        create_topic(b.bootstrap, topic, partitions=2)
        assert (full_dir / f"{topic}-0").is_dir() or (full_dir / f"{topic}-1").is_dir()
        in_full = 0 if (full_dir / f"{topic}-0").is_dir() else 1
        in_roomy = 1 - in_full
        assert (roomy / f"{topic}-{in_roomy}").is_dir()

        producer = KafkaPythonClient(b.bootstrap).producer(acks="all", retries=0, linger_ms=5)
        try:
            refused = False
            for round_ in range(200):
                values = [f"f{round_:04d}-{i}-".encode() + b"x" * VALUE_BYTES for i in range(BATCH)]
                futures = [producer.send(topic, value=v, partition=in_full) for v in values]
                producer.flush(timeout=30)
                errors = [f.exception for f in futures if f.failed()]
                if errors:
                    assert {type(e).__name__ for e in errors} == {"KafkaStorageError"}, errors
                    refused = True
                    break
            assert refused, "the small filesystem never filled"
            # The other dir's partition and the coordinator there are unaffected.
            ok = producer.send(topic, value=b"roomy", partition=in_roomy).get(timeout=30)
            assert ok.offset == 0
            assert commit(topic, 7) == 7
        finally:
            producer.close(timeout=10)
        status, body = server.get("/readyz")
        assert status == 503 and str(full_dir) in body and str(roomy) not in body, body
        assert server.offline_gauges() == (1.0, 1.0)
    finally:
        b.close()
