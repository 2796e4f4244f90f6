"""Zero-copy fetch: on a plain socket, record sets of 32 KiB and more go from the segment files to
the socket with sendfile; TLS copies them through the encryption.  One broker with a PLAINTEXT and
an SSL listener serves the same log both ways.

* Every client library reads the same records over PLAINTEXT (sendfile) as confluent-kafka reads
  over SSL (the copying path): librdkafka, kafka-python, aiokafka, kcat and Kafka's console consumer,
  compared by partition, offset, key and the CRC of each value.  The broker's counter of bytes sent
  with sendfile shows the path was taken.
* Raw Fetch requests at offsets all over a compacted topic whose segments rolled, at several sizes,
  answer the same bytes and watermarks on both listeners.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import free_port
from compat_tests.clients import ConfluentClient, KafkaPythonClient, Rec, create_topic, unique_topic
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import API_FETCH, RawConnection
from compat_tests.storage_support import disk_records, wait_for
from compat_tests.tls_broker import TlsBroker

PARTITIONS = 2
RECORDS = 1200  # of 1 KiB: about 600 KiB per partition, over several 128 KiB segments
SEGMENT_BYTES = 128 * 1024
SENDFILE_METRIC = "pykafkad_network_sendfile_bytes_total"

Seen = list[tuple[int, int, bytes | None, int]]  # partition, offset, key, CRC-32 of the value


class ZeroCopyBroker(TlsBroker):
    def __init__(self, work: Path) -> None:
        super().__init__(work, name="zero-copy")
        self.http_port = free_port()
        self.broker.overrides.update({
            "metrics.listener": f"http://127.0.0.1:{self.http_port}",
            "log.cleaner.backoff.ms": "250",
            "log.retention.check.interval.ms": "250",
        })

    def sendfile_bytes(self) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        [line] = [line for line in text.splitlines() if line.startswith(SENDFILE_METRIC + " ")]
        return float(line.split()[1])


@pytest.fixture(scope="module")
def zc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZeroCopyBroker]:
    server = ZeroCopyBroker(tmp_path_factory.mktemp("zero-copy"))
    server.broker.start()
    yield server
    server.broker.close()


def _value(n: int) -> bytes:
    # Printable, so the command-line consumers print it as it is; different in every record.
    return (f"{n:06d}-" * 147)[:1024].encode()


@pytest.fixture(scope="module")
def topic(zc: ZeroCopyBroker) -> str:
    name = unique_topic("zero-copy")
    create_topic(zc.broker.bootstrap, name, partitions=PARTITIONS,
                 config={"internal.segment.bytes": str(SEGMENT_BYTES)})
    records = [Rec(_value(n), f"key-{n}".encode(), partition=n % PARTITIONS) for n in range(RECORDS)]
    ConfluentClient(zc.broker.bootstrap).produce(topic=name, records=records, **{"batch.size": 65536})
    return name


def _crc(value: bytes | None) -> int:
    return zlib.crc32(value or b"")


def _per_partition(client: ConfluentClient | KafkaPythonClient, topic: str, **settings: Any) -> Seen:
    """Every record, read partition by partition from the earliest offset."""
    seen: Seen = []
    for p in range(PARTITIONS):
        got = client.consume(topic, p, "earliest", RECORDS // PARTITIONS, **settings)
        seen += [(p, g.offset, g.key, _crc(g.value)) for g in got]
    return seen


def _through_tls(zc: ZeroCopyBroker, topic: str) -> Seen:
    return sorted(_per_partition(ConfluentClient(zc.ssl_bootstrap), topic, **{
        "security.protocol": "SSL", "ssl.ca.location": str(zc.ca.cert_path)}))


def _confluent(zc: ZeroCopyBroker, topic: str) -> Seen:
    return _per_partition(ConfluentClient(zc.broker.bootstrap), topic)


def _kafka_python(zc: ZeroCopyBroker, topic: str) -> Seen:
    return _per_partition(KafkaPythonClient(zc.broker.bootstrap), topic)


def _aiokafka(zc: ZeroCopyBroker, topic: str) -> Seen:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def read() -> Seen:
        consumer = AIOKafkaConsumer(bootstrap_servers=zc.broker.bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest")
        await consumer.start()
        try:
            partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            consumer.assign(partitions)
            await consumer.seek_to_beginning(*partitions)
            seen: Seen = []
            while len(seen) < RECORDS:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 60)
                for records in batches.values():
                    seen += [(r.partition, r.offset, r.key, _crc(r.value)) for r in records]
            return seen
        finally:
            await consumer.stop()

    return asyncio.run(read())


def _kcat(zc: ZeroCopyBroker, topic: str) -> Seen:
    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        pytest.fail("kcat is not installed: run `make system-deps`", pytrace=False)
    out = subprocess.run([exe, "-b", zc.broker.bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
                          "-f", "%p\t%o\t%k\t%s\n"], check=True, capture_output=True, timeout=120).stdout
    return [_parsed(line.split(b"\t")) for line in out.splitlines()]


def _java(zc: ZeroCopyBroker, topic: str) -> Seen:
    out = run_tool("kafka-console-consumer", [
        "--bootstrap-server", zc.broker.bootstrap, "--topic", topic, "--from-beginning",
        "--max-messages", str(RECORDS), "--timeout-ms", "60000",
        "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
        "--formatter-property", "print.key=true",
    ]).stdout
    # Partition:0<TAB>Offset:12<TAB>key-24<TAB>value
    return [_parsed([f.split(":", 1)[-1] for f in line.split("\t")]) for line in out.splitlines() if line]


def _parsed(fields: list[Any]) -> tuple[int, int, bytes | None, int]:
    partition, offset, key, value = fields
    as_bytes = [f.encode() if isinstance(f, str) else f for f in (key, value)]
    return int(partition), int(offset), as_bytes[0], _crc(as_bytes[1])


@pytest.mark.parametrize("client", [_confluent, _kafka_python, _aiokafka, _kcat, _java],
                         ids=["confluent-kafka", "kafka-python", "aiokafka", "kcat", "java-console-consumer"])
def test_every_client_reads_over_sendfile_what_tls_copies(zc: ZeroCopyBroker, topic: str, client: Any) -> None:
    reference = _through_tls(zc, topic)
    assert len(reference) == RECORDS
    before = zc.sendfile_bytes()
    seen = client(zc, topic)
    assert sorted(seen) == reference
    # The plaintext reads went through sendfile: at least half the log's bytes (a client's first
    # small fetches may be copied).
    assert zc.sendfile_bytes() - before >= RECORDS * 1024 / 2


def _fetch_body(topic: str, offset: int, max_bytes: int) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": max_bytes, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": offset,
                                                         "current_leader_epoch": -1, "log_start_offset": -1,
                                                         "partition_max_bytes": max_bytes}]}]}


def _tls_connection(zc: ZeroCopyBroker) -> RawConnection:
    conn = RawConnection(zc.ssl_port)
    context = ssl.create_default_context(cafile=str(zc.ca.cert_path))
    conn.sock = context.wrap_socket(conn.sock, server_hostname="127.0.0.1")
    return conn


def test_fetches_across_rolled_and_compacted_segments_send_the_same_bytes_both_ways(zc: ZeroCopyBroker) -> None:
    name = unique_topic("zero-copy-compacted")
    create_topic(zc.broker.bootstrap, name, config={
        "cleanup.policy": "compact", "internal.segment.bytes": str(96 * 1024), "segment.ms": "1000",
        "min.cleanable.dirty.ratio": "0.01"})
    keys = 120
    client = ConfluentClient(zc.broker.bootstrap)
    for round_ in range(4):
        client.produce(topic=name, records=[Rec(_value(round_ * keys + k), f"k{k}".encode()) for k in range(keys)],
                       **{"batch.size": 16384})
    part = zc.broker.partition_dir(name)

    def cleaned() -> list[Any] | None:
        records = disk_records(part)
        return records if len({k for _, k, _ in records}) == len(records) else None

    survivors = wait_for("the cleaner leaves one record per key", cleaned)
    offsets = sorted({0, *(o for o, _, _ in survivors[::7]), survivors[-1][0], survivors[-1][0] + 1})
    assert len(list(part.glob("*.log"))) > 1
    before = zc.sendfile_bytes()
    with RawConnection(zc.broker.port) as plain, _tls_connection(zc) as encrypted:
        for offset in offsets:
            for max_bytes in (40 * 1024, 100 * 1024, 1 << 20):
                answers = []
                for conn in (plain, encrypted):
                    [t] = conn.request(API_FETCH, 12, _fetch_body(name, offset, max_bytes))["responses"]
                    [p] = t["partitions"]
                    answers.append({k: bytes(v) if k == "records" else v for k, v in p.items()})
                assert answers[0] == answers[1], f"offset {offset}, max_bytes {max_bytes}"
    assert zc.sendfile_bytes() > before


def test_a_tls_listener_never_sends_from_files(zc: ZeroCopyBroker, topic: str) -> None:
    before = zc.sendfile_bytes()
    assert len(_through_tls(zc, topic)) == RECORDS
    assert zc.sendfile_bytes() == before

