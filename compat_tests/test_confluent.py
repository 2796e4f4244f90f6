"""confluent-kafka (librdkafka) against pykafkad: every codec, keys/null keys/headers/empty
and 1 MB values, acks 0/1/all, the idempotent producer, and assignment-based
consumption from the beginning, from an offset and from a timestamp."""

from __future__ import annotations

from compat_tests.clients import ConfluentClient
from compat_tests.produce_consume_cases import ProduceConsumeCases


class TestConfluent(ProduceConsumeCases):
    client_cls = ConfluentClient
    large_producer_cfg = {"message.max.bytes": 2_000_000}
    large_consumer_cfg = {"max.partition.fetch.bytes": 2_000_000}
    idempotent_cfg = {"enable.idempotence": True}
