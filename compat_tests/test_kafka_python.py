"""kafka-python against pykafkad: every codec, keys/null keys/headers/empty and 1 MB values,
acks 0/1/all, the idempotent producer, and assignment-based consumption from the
beginning, from an offset and from a timestamp (offsets_for_times)."""

from __future__ import annotations

import kafka.codec
import pytest

from compat_tests.clients import KafkaPythonClient
from compat_tests.produce_consume_cases import CODECS, ProduceConsumeCases


@pytest.mark.parametrize("codec", CODECS[1:])
def test_codec_library_installed(codec: str) -> None:
    """The codec tests below need kafka-python's optional codec libraries."""
    has = {
        "gzip": kafka.codec.has_gzip,
        "snappy": kafka.codec.has_snappy,
        "lz4": kafka.codec.has_lz4,
        "zstd": kafka.codec.has_zstd,
    }[codec]
    assert has(), (
        f"kafka-python cannot do {codec}: install kafka-python[snappy,lz4,zstd] "
        "(python-snappy, lz4, zstandard) in the test environment"
    )


class TestKafkaPython(ProduceConsumeCases):
    client_cls = KafkaPythonClient
    large_producer_cfg = {"max_request_size": 2_000_000, "batch_size": 16384}
    large_consumer_cfg = {"max_partition_fetch_bytes": 2_000_000, "fetch_max_bytes": 4_000_000}
    idempotent_cfg = {"enable_idempotence": True}
