"""Produce/consume cases shared by the per-client test files.

`ProduceConsumeCases` is not collected by itself (its name does not start with
Test); test_kafka_python.py and test_confluent.py subclass it and set `client_cls`.
Each case produces with the client under test, then consumes with the same
client by assignment and checks every record's key, value, headers, offset and
CreateTime timestamp.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import (
    ConfluentClient,
    KafkaPythonClient,
    Rec,
    assert_records_match,
    create_topic,
    now_ms,
    sample_records,
    unique_topic,
)

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
ONE_MB = 1024 * 1024


class ProduceConsumeCases:
    client_cls: type[KafkaPythonClient] | type[ConfluentClient]
    # Client settings that let a ~1 MB record through (names differ per client).
    large_producer_cfg: dict[str, Any] = {}
    large_consumer_cfg: dict[str, Any] = {}
    idempotent_cfg: dict[str, Any] = {}

    def client(self, broker: BrokerProcess) -> Any:
        return self.client_cls(broker.bootstrap)

    def _topic(self, broker: BrokerProcess, what: str, partitions: int = 1) -> str:
        topic = unique_topic(f"{self.client_cls.name}-{what}")
        create_topic(broker.bootstrap, topic, partitions)
        return topic

    @pytest.mark.parametrize("codec", CODECS)
    def test_codec_roundtrip(self, broker: BrokerProcess, codec: str) -> None:
        c = self.client(broker)
        topic = self._topic(broker, f"codec-{codec}")
        sent = sample_records(40, now_ms() - 100_000, tag=codec)
        offsets = c.produce(topic, sent, acks="all", compression=codec)
        assert offsets == list(range(40)), f"acknowledged offsets {offsets}"
        got = c.consume(topic, 0, "earliest", count=40)
        assert_records_match(sent, got, offsets)
        assert c.offsets(topic, 0) == (0, 40)

    @pytest.mark.parametrize("acks", [0, 1, "all"])
    def test_acks(self, broker: BrokerProcess, acks: Any) -> None:
        c = self.client(broker)
        topic = self._topic(broker, f"acks-{acks}")
        sent = sample_records(25, now_ms() - 50_000, tag=f"acks{acks}")
        offsets = c.produce(topic, sent, acks=acks)
        if acks != 0:
            assert offsets == list(range(25))
        got = c.consume(topic, 0, "earliest", count=25)
        assert_records_match(sent, got, list(range(25)))

    def test_one_megabyte_value(self, broker: BrokerProcess) -> None:
        c = self.client(broker)
        topic = self._topic(broker, "large")
        big = os.urandom(ONE_MB)
        sent = [Rec(b"small-before", b"k0"), Rec(big, b"big", (("h", b"v"),)), Rec(b"small-after", b"k2")]
        offsets = c.produce(topic, sent, acks="all", **self.large_producer_cfg)
        assert offsets == [0, 1, 2]
        got = c.consume(topic, 0, "earliest", count=3, **self.large_consumer_cfg)
        assert_records_match(sent, got, offsets, check_timestamps=False)

    def test_idempotent_producer(self, broker: BrokerProcess) -> None:
        c = self.client(broker)
        topic = self._topic(broker, "idem", partitions=2)
        base = now_ms() - 10_000
        sent = [
            Rec(f"idem-{i}".encode(), f"k{i}".encode(), timestamp=base + i, partition=i % 2)
            for i in range(60)
        ]
        offsets = c.produce(topic, sent, acks="all", **self.idempotent_cfg)
        for p in (0, 1):
            part_sent = [r for r in sent if r.partition == p]
            part_offsets = [o for r, o in zip(sent, offsets, strict=True) if r.partition == p]
            assert part_offsets == list(range(30)), f"partition {p} offsets {part_offsets}"
            got = c.consume(topic, p, "earliest", count=30)
            assert_records_match(part_sent, got, part_offsets)
            assert c.offsets(topic, p) == (0, 30), "duplicates were appended"

    def test_consume_from_offset(self, broker: BrokerProcess) -> None:
        c = self.client(broker)
        topic = self._topic(broker, "from-offset")
        sent = sample_records(30, now_ms() - 60_000, tag="fo")
        offsets = c.produce(topic, sent)
        for start in (0, 1, 17, 29):
            got = c.consume(topic, 0, start, count=30 - start)
            assert_records_match(sent[start:], got, offsets[start:])

    def test_consume_from_timestamp(self, broker: BrokerProcess) -> None:
        c = self.client(broker)
        topic = self._topic(broker, "from-ts")
        base = now_ms() - 3_600_000
        sent = sample_records(20, base, tag="ts")  # timestamps base, base+1000, ...
        offsets = c.produce(topic, sent)
        # Exact hit, between two records, before the first, after the last.
        assert c.offset_for_time(topic, 0, base + 5000) == 5
        assert c.offset_for_time(topic, 0, base + 5500) == 6
        assert c.offset_for_time(topic, 0, base - 99_000) == 0
        assert c.offset_for_time(topic, 0, base + 10_000_000) is None
        start = c.offset_for_time(topic, 0, base + 12_000)
        assert start == 12
        got = c.consume(topic, 0, start, count=8)
        assert_records_match(sent[12:], got, offsets[12:])

    def test_multiple_partitions_keep_their_own_offsets(self, broker: BrokerProcess) -> None:
        c = self.client(broker)
        topic = self._topic(broker, "parts", partitions=3)
        base = now_ms() - 5_000
        sent = [Rec(f"p{i % 3}-{i}".encode(), None, timestamp=base + i, partition=i % 3) for i in range(30)]
        c.produce(topic, sent)
        for p in range(3):
            got = c.consume(topic, p, "earliest", count=10)
            assert_records_match([r for r in sent if r.partition == p], got, list(range(10)))
