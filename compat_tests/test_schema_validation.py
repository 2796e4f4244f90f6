"""Schemas enforced on produce (issue 29): a topic with ``confluent.value.schema.validation=true``
(Confluent Server's name) takes only records framed by a schema registry serializer with an id its
subject holds, and ``pykafkad.value.schema.validation=full`` also decodes each record against its
schema.  Driven by confluent-kafka's serializers for what passes, and by producers that skip their
serializer (confluent-kafka, the Java producer, kafka-python) for what is refused: INVALID_RECORD
with KIP-467's per-record errors, valid batches unaffected.

One broker runs the registry itself; another has none and reads the _schemas topic that a
standalone ``pykafkad registry`` writes, so a schema registered a moment before the produce is
found there too.
"""

from __future__ import annotations

import json
import struct
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from kafka import KafkaProducer
from kafka.errors import InvalidRecordError

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.java_tools import run_tool
from compat_tests.storage_support import wait_for
from compat_tests.test_schema_registry import (
    SHIPMENT_PROTO,
    USER_V1,
    RegistryBroker,
    StandaloneRegistry,
    _compiled_module,
    _register,
)

ORDER = {"type": "record", "name": "Order", "namespace": "shop",
         "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}]}
ORDER_JSON = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
              "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}, "required": ["id", "item"]}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryBroker]:
    found = RegistryBroker(tmp_path_factory.mktemp("validation"))
    found.metrics_port = free_port()
    found.broker.overrides["metrics.listener"] = f"http://127.0.0.1:{found.metrics_port}"
    found.start()
    yield found
    found.broker.close()


def _topic(bootstrap: str, name: str, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=configs)])[name].result(30)


def _framed(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + struct.pack(">i", schema_id) + body


def _send(bootstrap: str, topic: str, values: list[bytes | None], keys: list[bytes | None] | None = None
          ) -> list[KafkaError | None]:
    """Each value in one batch with confluent-kafka; each record's delivery error or None.

    The linger is far longer than the test takes to queue the values, so a busy machine pausing the
    test between two ``produce`` calls cannot split the batch; ``flush`` sends at once regardless.
    """
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 10_000, "retries": 0})
    delivered = object()
    outcomes: list[Any] = [None] * len(values)

    def report(i: int) -> Any:
        return lambda err, _msg: outcomes.__setitem__(i, err if err is not None else delivered)

    for i, value in enumerate(values):
        producer.produce(topic, value, keys[i] if keys else None, on_delivery=report(i))
    assert producer.flush(30) == 0
    assert all(o is not None for o in outcomes), "a record was not reported"
    return [None if o is delivered else o for o in outcomes]


def _refusal(bootstrap: str, topic: str, value: bytes) -> str:
    """Why the broker refused ``value``, as kafka-python reports KIP-467's record error."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0, retries=0)
    try:
        with pytest.raises(InvalidRecordError) as refused:
            producer.send(topic, value).get(30)
    finally:
        producer.close()
    return str(refused.value)


def _count(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-count"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        consumer.close()


def _metric(registry: RegistryBroker, topic: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{registry.metrics_port}/metrics", timeout=10).read()
    for line in text.decode().splitlines():
        if line.startswith("pykafkad_schema_validation_refused_records_total") and f'topic="{topic}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_a_validated_topic_takes_serialized_records_and_refuses_the_rest_record_by_record(
        registry: RegistryBroker) -> None:
    bootstrap = registry.broker.bootstrap
    _topic(bootstrap, "orders", **{"confluent.value.schema.validation": "true"})
    client = SchemaRegistryClient({"url": registry.url})
    serialize = AvroSerializer(client, json.dumps(ORDER))
    good = [serialize({"id": i, "item": "tea"}, SerializationContext("orders", MessageField.VALUE)) for i in range(3)]
    assert _send(bootstrap, "orders", good) == [None, None, None]
    # Another subject's id, an unknown id, and bytes no serializer made: the batch is refused, each
    # bad record named (KIP-467), and librdkafka fails the others of the batch as collateral.
    status, other = _register(registry, "elsewhere-value", USER_V1)
    assert status == 200, other
    mixed = [good[0], _framed(other["id"], b"\x02"), _framed(99_999, b""), b'{"id": 1}', None]
    errors = _send(bootstrap, "orders", mixed)
    codes = [e.code() if e is not None else None for e in errors]
    assert codes == [KafkaError._INVALID_DIFFERENT_RECORD] + [KafkaError.INVALID_RECORD] * 3 + [
        KafkaError._INVALID_DIFFERENT_RECORD], errors
    assert _count(bootstrap, "orders") == 3
    # A tombstone alone passes, as in Confluent Server; good records in their own batch still pass.
    assert _send(bootstrap, "orders", [None]) == [None]
    assert _send(bootstrap, "orders", good[:2]) == [None, None]
    assert _count(bootstrap, "orders") == 6
    assert _metric(registry, "orders") == 3


def test_kafka_python_and_the_java_producer_see_which_record_was_refused_and_why(registry: RegistryBroker) -> None:
    bootstrap = registry.broker.bootstrap
    _topic(bootstrap, "payments", **{"confluent.value.schema.validation": "true"})
    assert _refusal(bootstrap, "payments", b"not framed").endswith(
        "record 0: its value is not in the schema registry's wire format (magic byte 0 and a schema id); "
        "produce it with a schema registry serializer")
    java = run_tool("kafka-console-producer", ["--bootstrap-server", bootstrap, "--topic", "payments",
                                               "--command-property", "retries=0"], stdin="plain text\n", check=False)
    said = java.stdout + java.stderr
    assert "InvalidRecordException" in said, said[-3000:]
    assert "record 0: its value is not in the schema registry's wire format" in said, said[-3000:]


def test_keys_are_checked_when_asked_and_null_keys_pass(registry: RegistryBroker) -> None:
    bootstrap = registry.broker.bootstrap
    _topic(bootstrap, "keyed", **{"confluent.key.schema.validation": "true"})
    client = SchemaRegistryClient({"url": registry.url})
    key = AvroSerializer(client, json.dumps({"type": "string"}))("k1", SerializationContext("keyed", MessageField.KEY))
    assert _send(bootstrap, "keyed", [b"any value", b"another"], [key, None]) == [None, None]
    errors = _send(bootstrap, "keyed", [b"v"], [b"plain key"])
    assert errors[0] is not None and errors[0].code() == KafkaError.INVALID_RECORD


def test_full_validation_decodes_avro_json_and_protobuf_records_against_their_schemas(
        registry: RegistryBroker, tmp_path: Path) -> None:
    bootstrap = registry.broker.bootstrap
    client = SchemaRegistryClient({"url": registry.url})
    full = {"pykafkad.value.schema.validation": "full"}
    # Avro: a right id on bytes that are not an Order is refused; a real Order passes.
    _topic(bootstrap, "orders-full", **full)
    avro = AvroSerializer(client, json.dumps(ORDER))
    good = avro({"id": 1, "item": "tea"}, SerializationContext("orders-full", MessageField.VALUE))
    schema_id = int.from_bytes(good[1:5], "big")
    assert _send(bootstrap, "orders-full", [good]) == [None]
    for bad in (_framed(schema_id, b"\x02"), good + b"\x00"):
        errors = _send(bootstrap, "orders-full", [bad])
        assert errors[0] is not None and errors[0].code() == KafkaError.INVALID_RECORD
    said = _refusal(bootstrap, "orders-full", good + b"\x00")
    assert f"its value (schema id {schema_id}, subject 'orders-full-value') is not a datum of its Avro schema " \
           "(1 byte(s) left over after the datum)" in said, said
    # JSON Schema: a document without the required item is refused.
    _topic(bootstrap, "orders-json", **full)
    js = JSONSerializer(json.dumps(ORDER_JSON), client)
    good_json = js({"id": 1, "item": "tea"}, SerializationContext("orders-json", MessageField.VALUE))
    assert _send(bootstrap, "orders-json", [good_json]) == [None]
    json_id = int.from_bytes(good_json[1:5], "big")
    errors = _send(bootstrap, "orders-json", [_framed(json_id, b'{"id": 2}'), _framed(json_id, b"{")])
    assert all(e is not None and e.code() == KafkaError.INVALID_RECORD for e in errors)
    said = _refusal(bootstrap, "orders-json", _framed(json_id, b'{"id": 2}'))
    assert "is not valid against its JSON Schema at the top level: 'item' is a required property" in said, said
    # Protobuf: a message index past the file's messages, and bytes that are no Shipment, are refused.
    # A package of its own: test_schema_registry's Shipment is in this process's protobuf pool already.
    module = _compiled_module(tmp_path, "shipment_full", SHIPMENT_PROTO.replace("package shop;", "package shopfull;"))
    _topic(bootstrap, "shipments-full", **full)
    pb = ProtobufSerializer(module.Shipment, client, {"use.deprecated.format": False})
    good_pb = pb(module.Shipment(id=3, address="x"), SerializationContext("shipments-full", MessageField.VALUE))
    assert _send(bootstrap, "shipments-full", [good_pb]) == [None]
    pb_id = int.from_bytes(good_pb[1:5], "big")
    for bad in (_framed(pb_id, b"\x02\x0a") + b"\x08\x01", _framed(pb_id, b"\x00") + b"\x0a\xff\xff"):
        errors = _send(bootstrap, "shipments-full", [bad])
        assert errors[0] is not None and errors[0].code() == KafkaError.INVALID_RECORD, bad
    said = _refusal(bootstrap, "shipments-full", _framed(pb_id, b"\x02\x0a") + b"\x08\x01")
    assert "is not a message of its Protobuf schema (message index 5)" in said, said
    assert _count(bootstrap, "shipments-full") == 1


def test_record_name_strategy_checks_the_subject_the_record_name_gives(registry: RegistryBroker) -> None:
    bootstrap = registry.broker.bootstrap
    _topic(bootstrap, "mixed-events", **{
        "confluent.value.schema.validation": "true",
        "confluent.value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"})
    client = SchemaRegistryClient({"url": registry.url})
    from confluent_kafka.schema_registry import record_subject_name_strategy
    by_name = AvroSerializer(client, json.dumps(ORDER), conf={"subject.name.strategy": record_subject_name_strategy})
    assert _send(bootstrap, "mixed-events", [by_name({"id": 1, "item": "tea"}, SerializationContext(
        "mixed-events", MessageField.VALUE))]) == [None]
    # Registered under the topic's subject, not under shop.Order: refused.
    by_topic = AvroSerializer(client, json.dumps(USER_V1))
    errors = _send(bootstrap, "mixed-events", [by_topic({"name": "ada", "age": 3}, SerializationContext(
        "mixed-events", MessageField.VALUE))])
    assert errors[0] is not None and errors[0].code() == KafkaError.INVALID_RECORD


def test_bad_validation_configs_are_refused_with_kafkas_error(registry: RegistryBroker) -> None:
    admin = AdminClient({"bootstrap.servers": registry.broker.bootstrap})
    for configs in ({"pykafkad.value.schema.validation": "strict"}, {"confluent.value.schema.validation": "yes"},
                    {"confluent.key.subject.name.strategy": "MyStrategy"}):
        with pytest.raises(KafkaException) as refused:
            admin.create_topics([NewTopic("badly-validated", 1, 1, config=configs)])["badly-validated"].result(30)
        assert refused.value.args[0].code() == KafkaError.INVALID_CONFIG, configs


def test_a_broker_without_a_registry_reads_the_schemas_a_standalone_registry_writes(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs", {"offsets.topic.replication.factor": "1"}, name="validating-broker")
    broker.start()
    standalone = None
    try:
        standalone = StandaloneRegistry(broker.bootstrap, tmp_path / "registry.log")
        _topic(broker.bootstrap, "remote-orders", **{"confluent.value.schema.validation": "true"})
        client = SchemaRegistryClient({"url": standalone.url})
        for n in range(3):
            # Registered a moment before the produce: the broker reads _schemas to its end and finds it.
            schema = {**ORDER, "fields": [*ORDER["fields"], {"name": f"f{n}", "type": "int", "default": n}]}
            serialize = AvroSerializer(client, json.dumps(schema))
            value = serialize({"id": n, "item": "tea", f"f{n}": n}, SerializationContext("remote-orders",
                                                                                         MessageField.VALUE))
            assert _send(broker.bootstrap, "remote-orders", [value]) == [None]
        errors = _send(broker.bootstrap, "remote-orders", [b"raw"])
        assert errors[0] is not None and errors[0].code() == KafkaError.INVALID_RECORD
        wait_for("3 records", lambda: _count(broker.bootstrap, "remote-orders") == 3)
    finally:
        if standalone is not None:
            assert standalone.stop() == 0
        broker.close()


def test_a_broker_that_cannot_read_the_schemas_topic_says_why_and_reads_it_once_fixed(tmp_path: Path) -> None:
    """No registry in this broker, and a ``_schemas`` it cannot use (two partitions): a produce to a
    validated topic is refused as retriable (REQUEST_TIMED_OUT, as a leader not ready), the log says
    why, and once the topic is replaced the broker tries again and validates."""
    broker = BrokerProcess(tmp_path / "logs", {"offsets.topic.replication.factor": "1"}, name="unreadable-schemas")
    broker.start()
    standalone = None
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("_schemas", 2, 1)])["_schemas"].result(30)
        _topic(broker.bootstrap, "guarded", **{"confluent.value.schema.validation": "true"})
        [error] = _send(broker.bootstrap, "guarded", [_framed(1, b"x")])
        assert error is not None and error.code() == KafkaError.REQUEST_TIMED_OUT, error
        assert "schema validation: cannot read _schemas: topic _schemas has 2 partitions" in broker.stderr_text()

        admin.delete_topics(["_schemas"])["_schemas"].result(30)
        wait_for("_schemas deleted", lambda: "_schemas" not in admin.list_topics(timeout=10).topics)
        standalone = StandaloneRegistry(broker.bootstrap, tmp_path / "registry.log")
        schema_id = SchemaRegistryClient({"url": standalone.url}).register_schema(
            "guarded-value", Schema(json.dumps(ORDER), "AVRO"))
        serialize = AvroSerializer(SchemaRegistryClient({"url": standalone.url}), json.dumps(ORDER))
        value = serialize({"id": 1, "item": "tea"}, SerializationContext("guarded", MessageField.VALUE))
        assert struct.unpack(">i", value[1:5])[0] == schema_id
        # A producer that retries (librdkafka's default) is answered once the broker has tried again.
        producer = Producer({"bootstrap.servers": broker.bootstrap, "message.timeout.ms": 60000})
        outcome: list[KafkaError | None] = []
        producer.produce("guarded", value, on_delivery=lambda err, _msg: outcome.append(err))
        assert producer.flush(90) == 0 and outcome == [None], outcome
        [refused] = _send(broker.bootstrap, "guarded", [_framed(schema_id + 100, b"x")])
        assert refused is not None and refused.code() == KafkaError.INVALID_RECORD
    finally:
        if standalone is not None:
            assert standalone.stop() == 0
        broker.close()


def test_full_validation_follows_schema_references(registry: RegistryBroker, tmp_path: Path) -> None:
    """A Protobuf message importing another subject's file (registered by the serializer as a
    reference) is decoded with the import known; bytes that are no such message are refused."""
    bootstrap = registry.broker.bootstrap
    _topic(bootstrap, "visits-full", **{"pykafkad.value.schema.validation": "full"})
    _compiled_module(tmp_path, "spot", 'syntax = "proto3";\npackage geofull;\nmessage Spot {\n  string city = 1;\n}\n')
    module = _compiled_module(tmp_path, "stay", 'syntax = "proto3";\npackage tripsfull;\nimport "spot.proto";\n'
                                                'message Stay {\n  geofull.Spot spot = 1;\n  int32 nights = 2;\n}\n')
    client = SchemaRegistryClient({"url": registry.url})
    serialize = ProtobufSerializer(module.Stay, client, {"use.deprecated.format": False})
    stay = module.Stay(nights=3)
    stay.spot.city = "Porto"
    good = serialize(stay, SerializationContext("visits-full", MessageField.VALUE))
    assert _send(bootstrap, "visits-full", [good]) == [None]
    stay_id = int.from_bytes(good[1:5], "big")
    said = _refusal(bootstrap, "visits-full", _framed(stay_id, b"\x00") + b"\x0a\x05\x0a\x03ab")
    assert "is not a tripsfull.Stay message" in said, said
