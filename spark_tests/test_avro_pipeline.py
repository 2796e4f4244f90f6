"""``pykafkad pipeline avro`` (issue 29): a topic of JSON records becomes a topic of Avro records in
the schema registry's wire format, on a pykafkad broker that runs the registry.  The schema is
inferred (or given), registered under the output topic's value subject, and the records are read
back by confluent-kafka's ``AvroDeserializer`` and by Spark's ``from_avro``; a schema the
registry finds incompatible stops the pipeline before anything is written."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.storage_support import wait_for
from pykafkad.pipelines import avro
from spark_tests.conftest import BROKER_OVERRIDES
from spark_tests.kafka_data import Rec, create_topic, produce, read_all, unique_topic

ORDERS = [{"id": 1, "item": "tea", "price": 2.5, "tags": ["hot"]},
          {"id": 2, "item": "cake", "tags": []},
          {"id": 3, "item": "jam", "price": 4.0, "tags": ["sweet", "jar"]},
          {"id": 4, "item": "bread", "price": 3.25, "tags": ["warm"]}]


class RegistryBroker:
    def __init__(self, tmp: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        self.broker = BrokerProcess(tmp / "logs", {**BROKER_OVERRIDES, "schema.registry.listener": self.url,
                                                   "offsets.topic.replication.factor": "1"}, name="avro-broker")

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as answer:
            return json.loads(answer.read())


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/subjects", timeout=5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryBroker]:
    found = RegistryBroker(tmp_path_factory.mktemp("avro-pipeline"))
    found.broker.start()
    wait_for("the registry answers", lambda: _up(found.url), timeout=60)
    yield found
    found.broker.close()


def _args(registry: RegistryBroker, src: str, dst: str, tmp_path: Path, *extra: str) -> list[str]:
    return ["-b", registry.broker.bootstrap, "--topic", src, "--to-topic", dst, "--registry-url", registry.url,
            "--checkpoint", str(tmp_path / "ckpt"), "--available-now", "--timeout", "120", *extra]


def test_json_records_become_avro_that_confluent_and_spark_read_back(
        spark: Any, registry: RegistryBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = unique_topic("orders-json"), unique_topic("orders")
    create_topic(registry.broker.bootstrap, src, 2)
    produce(registry.broker.bootstrap, src, [Rec(value=json.dumps(o).encode(), key=str(o["id"]).encode(),
                                                 partition=o["id"] % 2) for o in ORDERS[:3]])
    assert avro.main(_args(registry, src, dst, tmp_path)) == 0
    out = capsys.readouterr().out
    assert f"registered under {dst}-value" in out and f"created {dst}: 2 partition(s)" in out, out

    # The inferred schema: every field optional (default null), so later versions can add fields.
    latest = registry.get(f"/subjects/{dst}-value/versions/latest")
    schema = json.loads(latest["schema"])
    assert (latest["version"], schema["type"], schema["name"]) == (1, "record", avro.record_name(dst))
    fields = {f["name"]: (f["type"], f["default"]) for f in schema["fields"]}
    assert fields == {"id": (["null", "long"], None), "item": (["null", "string"], None),
                      "price": (["null", "double"], None),
                      "tags": (["null", {"type": "array", "items": ["null", "string"]}], None)}

    # More records arrive; the next run goes on from its checkpoint with the same schema.
    produce(registry.broker.bootstrap, src, [Rec(value=json.dumps(ORDERS[3]).encode(), key=b"4", partition=0)])
    assert avro.main(_args(registry, src, dst, tmp_path)) == 0
    written = read_all(registry.broker.bootstrap, dst, expect=4)
    assert all(r.value[:5] == b"\x00" + latest["id"].to_bytes(4, "big") for r in written)
    assert sorted((r.partition, r.key) for r in written) == [(0, b"2"), (0, b"4"), (1, b"1"), (1, b"3")]

    deserializer = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    decoded = [deserializer(r.value, SerializationContext(dst, MessageField.VALUE)) for r in written]
    assert sorted(decoded, key=lambda o: o["id"]) == [{"price": None, **o} for o in ORDERS]

    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    rows = (spark.read.format("kafka").option("kafka.bootstrap.servers", registry.broker.bootstrap)
            .option("subscribe", dst).option("startingOffsets", "earliest").load()
            .select(from_avro(F.expr("substring(value, 6)"), latest["schema"]).alias("order"))
            .select("order.*").orderBy("id").collect())
    assert [r.asDict() for r in rows] == [{"price": None, **o} for o in ORDERS]


def test_a_given_schema_the_registry_finds_incompatible_stops_the_pipeline(
        spark: Any, registry: RegistryBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = unique_topic("items-json"), unique_topic("items")
    create_topic(registry.broker.bootstrap, src, 1)
    produce(registry.broker.bootstrap, src, [Rec(value=b'{"name": "tea", "count": 3}', key=b"k", partition=0)])
    given = tmp_path / "item.avsc"
    given.write_text(json.dumps({"type": "record", "name": "Item", "namespace": "shop", "fields": [
        {"name": "name", "type": "string"}, {"name": "count", "type": "int"}]}))
    assert avro.main(_args(registry, src, dst, tmp_path, "--schema", str(given))) == 0
    [record] = read_all(registry.broker.bootstrap, dst, expect=1)
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    assert deserializer(record.value, SerializationContext(dst, MessageField.VALUE)) == {"name": "tea", "count": 3}

    # A new required field without a default cannot read the records already written (BACKWARD).
    given.write_text(json.dumps({"type": "record", "name": "Item", "namespace": "shop", "fields": [
        {"name": "name", "type": "string"}, {"name": "count", "type": "int"}, {"name": "shop", "type": "string"}]}))
    assert avro.main(_args(registry, src, dst, tmp_path / "again", "--schema", str(given))) == 2
    err = capsys.readouterr().err
    assert f"the registry refused the schema of {dst}-value (409)" in err and "compatible" in err, err
    assert len(read_all(registry.broker.bootstrap, dst, expect=1)) == 1

    assert avro.main(_args(registry, src, dst, tmp_path, "--schema", str(tmp_path / "missing.avsc"))) == 2
    assert "missing.avsc: No such file or directory" in capsys.readouterr().err
