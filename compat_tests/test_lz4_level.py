"""`compression.lz4.level` (KIP-390): the level a topic gives lz4 changes what the broker stores.

Kafka compresses lz4 with lz4's fast compressor at the default level 9 and with LZ4HC at any other
level (1..17).  The same uncompressed batch, recompressed by topics at levels 1, 9 and 17, is stored
smaller at 17 than at 1 and 9, and every stored frame is read back by confluent-kafka, kafka-python
and Kafka's Java console consumer.
"""

from __future__ import annotations

import random

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import ConfluentClient, KafkaPythonClient, create_topic, now_ms, unique_topic
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import API_PRODUCE, RawConnection, produce_body, produce_partition_response
from compat_tests.storage_support import disk_batches, log_bytes
from pykafkad._rust_log import encode_batch

LZ4 = 3


def _values() -> list[bytes]:
    # Words repeating at many distances: LZ4HC finds matches the fast compressor skips.
    rng = random.Random(27)
    words = [f"w{rng.randrange(400)}" for _ in range(30000)]
    return [" ".join(words[i:i + 100]).encode() for i in range(0, 30000, 100)]


def _produce_uncompressed(b: BrokerProcess, topic: str, values: list[bytes]) -> None:
    batch = encode_batch([(None, v) for v in values], now_ms())
    with RawConnection(b.port) as conn:
        part = produce_partition_response(conn.request(API_PRODUCE, 9, produce_body(topic, 0, batch)))
    assert part["error_code"] == 0, part


def _java_values(b: BrokerProcess, topic: str, count: int) -> list[bytes]:
    out = run_tool("kafka-console-consumer", [
        "--bootstrap-server", b.bootstrap, "--topic", topic, "--partition", "0", "--offset", "earliest",
        "--max-messages", str(count), "--timeout-ms", "30000",
    ]).stdout
    return [line.encode() for line in out.splitlines() if line.strip()]


def test_lz4_level_changes_the_stored_batch_and_clients_read_it(broker: BrokerProcess) -> None:
    values = _values()
    sizes: dict[int, int] = {}
    topics: dict[int, str] = {}
    for level in (1, 9, 17):
        name = topics[level] = unique_topic(f"lz4-level{level}")
        create_topic(broker.bootstrap, name,
                     config={"compression.type": "lz4", "compression.lz4.level": str(level)})
        _produce_uncompressed(broker, name, values)
        assert [h["compression"] for h in disk_batches(broker.partition_dir(name))] == [LZ4]
        sizes[level] = log_bytes(broker.partition_dir(name))
        for client in (ConfluentClient(broker.bootstrap), KafkaPythonClient(broker.bootstrap)):
            got = [g.value for g in client.consume(name, 0, "earliest", len(values))]
            assert got == values, f"{client.name} at level {level}: {len(got)} records"
    print(f"stored bytes by lz4 level: {sizes}")
    assert sizes[17] < sizes[9], sizes
    assert sizes[17] < sizes[1], sizes
    assert _java_values(broker, topics[17], len(values)) == values
