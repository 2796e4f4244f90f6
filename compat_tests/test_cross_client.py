"""Cross-client: records produced by one stock client read back unchanged by the other."""

from __future__ import annotations

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import (
    ConfluentClient,
    KafkaPythonClient,
    assert_records_match,
    create_topic,
    now_ms,
    sample_records,
    unique_topic,
)

PAIRS = [(KafkaPythonClient, ConfluentClient), (ConfluentClient, KafkaPythonClient)]


@pytest.mark.parametrize("producer_cls,consumer_cls", PAIRS, ids=["kp-to-ck", "ck-to-kp"])
@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_cross_client(broker: BrokerProcess, producer_cls: type, consumer_cls: type, codec: str) -> None:
    topic = unique_topic(f"cross-{codec}")
    create_topic(broker.bootstrap, topic)
    sent = sample_records(30, now_ms() - 30_000, tag=f"x{codec}")
    offsets = producer_cls(broker.bootstrap).produce(topic, sent, compression=codec)
    assert offsets == list(range(30))
    got = consumer_cls(broker.bootstrap).consume(topic, 0, "earliest", count=30)
    assert_records_match(sent, got, offsets)
    got = consumer_cls(broker.bootstrap).consume(topic, 0, 11, count=19)
    assert_records_match(sent[11:], got, offsets[11:])
