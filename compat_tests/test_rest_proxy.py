"""The REST proxy (issue 30), API v2: plain HTTP (httpx) against the proxy in the broker
(``rest.listener``) and on its own (``pykafkad rest``) against the reference Apache Kafka.

Records go both ways between HTTP and native clients: produced over HTTP in each embedded format
and read by confluent-kafka (with the registry's deserializers for the schema formats), produced
by confluent-kafka and read over HTTP.  Consumer instances split a group's partitions, expire, and
leave committed offsets behind them; bad requests get Confluent's error codes.
"""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.service_process import ServiceProcess
from compat_tests.storage_support import wait_for
from compat_tests.test_schema_registry import StandaloneRegistry, _compiled_module

V2 = "application/vnd.kafka.v2+json"
ORDER = {"type": "record", "name": "Order", "namespace": "shop",
         "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"], "default": None}]}


def fmt_type(fmt: str) -> str:
    return f"application/vnd.kafka.{fmt}.v2+json"


class RestBroker:
    """A broker with its REST proxy and schema registry."""

    def __init__(self, tmp: Path, **overrides: str) -> None:
        self.rest_port, self.registry_port, self.console_port = free_port(), free_port(), free_port()
        self.broker = BrokerProcess(tmp / "logs", {
            "rest.listener": f"http://127.0.0.1:{self.rest_port}",
            "metrics.listener": f"http://127.0.0.1:{self.console_port}", "metrics.console.enable": "true",
            "schema.registry.listener": f"http://127.0.0.1:{self.registry_port}",
            "offsets.topic.replication.factor": "1", "auto.create.topics.enable": "false", **overrides},
            name="rest-broker")
        self.url = f"http://127.0.0.1:{self.rest_port}"
        self.registry_url = f"http://127.0.0.1:{self.registry_port}"
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def start(self) -> RestBroker:
        self.broker.start()
        wait_for("the proxy answers", lambda: _answers(self.http), timeout=60)
        return self

    def close(self) -> None:
        self.http.close()
        self.broker.close()


class StandaloneRest(ServiceProcess):
    """``pykafkad rest`` as a process, against ``bootstrap``."""
    service = "rest"

    def __init__(self, bootstrap: str, log_path: Path, *args: str, scheme: str = "http",
                 verify: ssl.SSLContext | bool = True) -> None:
        self._verify = verify
        self._http: httpx.Client | None = None
        super().__init__(bootstrap, log_path, args, scheme)

    @property
    def http(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(base_url=self.url, timeout=60, verify=self._verify)
        return self._http

    def answers(self) -> bool:
        return _answers(self.http)

    def stop(self) -> int:
        self.http.close()
        return super().stop()


def _answers(http: httpx.Client) -> bool:
    try:
        return http.get("/topics").status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestBroker]:
    found = RestBroker(tmp_path_factory.mktemp("rest")).start()
    yield found
    found.close()


def _create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept while its future runs
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def _produce_native(bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes]], partition: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value in records:
        producer.produce(topic, value, key, partition=partition)
    assert producer.flush(30) == 0


def _read_native(bootstrap: str, topic: str, count: int, partitions: int = 1) -> list[Any]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-native", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[Any] = []
    try:
        wait_for(f"{count} records of {topic}", lambda: got.extend(
            m for m in consumer.consume(100, 0.5) if m.error() is None) or len(got) >= count)
    finally:
        consumer.close()
    return got


def _consumer(http: httpx.Client, group: str, name: str, fmt: str = "binary", **settings: str) -> str:
    answer = http.post(f"/consumers/{group}", headers={"Content-Type": V2},
                       json={"name": name, "format": fmt, "auto.offset.reset": "earliest", **settings})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["instance_id"] == name
    assert body["base_uri"].endswith(f"/consumers/{group}/instances/{name}")
    return f"/consumers/{group}/instances/{name}"


def _records(http: httpx.Client, base: str, fmt: str, count: int) -> list[dict[str, Any]]:
    """Records read through a consumer instance until ``count`` have come."""
    got: list[dict[str, Any]] = []

    def more() -> bool:
        answer = http.get(base + "/records", params={"timeout": 1000}, headers={"Accept": fmt_type(fmt)})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith(fmt_type(fmt))
        got.extend(answer.json())
        return len(got) >= count

    wait_for(f"{count} records through {base}", more, timeout=60, interval=0)
    return got


def test_topics_partitions_offsets_and_brokers_are_described(rest: RestBroker) -> None:
    _create(rest.broker.bootstrap, "described", 2)
    _produce_native(rest.broker.bootstrap, "described", [(None, b"a"), (None, b"b")], partition=1)
    assert "described" in rest.http.get("/topics").json()
    topic = rest.http.get("/topics/described").json()
    assert topic["name"] == "described" and topic["configs"]["cleanup.policy"] == "delete"
    assert topic["partitions"] == [
        {"partition": p, "leader": 1, "replicas": [{"broker": 1, "leader": True, "in_sync": True}]} for p in (0, 1)]
    assert rest.http.get("/topics/described/partitions").json() == topic["partitions"]
    assert rest.http.get("/topics/described/partitions/1").json() == topic["partitions"][1]
    assert rest.http.get("/topics/described/partitions/1/offsets").json() == {"beginning_offset": 0, "end_offset": 2}
    assert rest.http.get("/brokers").json() == {"brokers": [1]}
    assert rest.http.get("/brokers").headers["content-type"] == V2


def test_binary_and_json_records_go_both_ways_between_http_and_native_clients(rest: RestBroker) -> None:
    _create(rest.broker.bootstrap, "plain", 3)
    answer = rest.http.post("/topics/plain", headers={"Content-Type": fmt_type("binary")}, json={"records": [
        {"key": base64.b64encode(b"k1").decode(), "value": base64.b64encode(b"\x00\xffbytes").decode()},
        {"value": base64.b64encode(b"to two").decode(), "partition": 2},
        {"key": None, "value": None}]})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["key_schema_id"] is None and body["value_schema_id"] is None
    assert [o["error_code"] for o in body["offsets"]] == [None, None, None]
    assert body["offsets"][1]["partition"] == 2
    # A key lands where a Java producer would put it (murmur2): the same key, the same partition.
    again = rest.http.post("/topics/plain", headers={"Content-Type": fmt_type("binary")},
                           json={"records": [{"key": base64.b64encode(b"k1").decode(), "value": "eA=="}]}).json()
    assert again["offsets"][0]["partition"] == body["offsets"][0]["partition"]
    json_answer = rest.http.post("/topics/plain/partitions/0", headers={"Content-Type": fmt_type("json")},
                                 json={"records": [{"key": "order-1", "value": {"id": 1, "items": ["tea"]}}]})
    assert json_answer.status_code == 200 and json_answer.json()["offsets"][0]["partition"] == 0

    native = {(m.key(), m.value()) for m in _read_native(rest.broker.bootstrap, "plain", 5, 3)}
    assert (b"k1", b"\x00\xffbytes") in native and (None, b"to two") in native and (None, None) in native
    assert (b'"order-1"', b'{"id":1,"items":["tea"]}') in native

    _create(rest.broker.bootstrap, "native-made")
    _produce_native(rest.broker.bootstrap, "native-made", [(b"a", b'{"n": 1}'), (None, b'[2]')])
    base = _consumer(rest.http, "http-readers", "binary-reader")
    assert rest.http.post(base + "/subscription", headers={"Content-Type": V2},
                          json={"topics": ["native-made"]}).status_code == 204
    assert rest.http.get(base + "/subscription").json() == {"topics": ["native-made"]}
    records = _records(rest.http, base, "binary", 2)
    assert [(r["key"], r["value"], r["partition"], r["offset"]) for r in records] == [
        (base64.b64encode(b"a").decode(), base64.b64encode(b'{"n": 1}').decode(), 0, 0),
        (None, base64.b64encode(b"[2]").decode(), 0, 1)]
    assert all(r["topic"] == "native-made" for r in records)
    as_json = _consumer(rest.http, "http-json-readers", "json-reader", "json")
    rest.http.post(as_json + "/assignments", headers={"Content-Type": V2},
                   json={"partitions": [{"topic": "native-made", "partition": 0}]})
    assert rest.http.get(as_json + "/assignments").json() == {"partitions": [{"topic": "native-made", "partition": 0}]}
    # The key b"a" is not JSON: the read fails, and the record is not skipped (the next read meets it
    # again) until a seek passes it.
    for _ in range(2):
        def refused() -> bool:
            answer = rest.http.get(as_json + "/records", params={"timeout": 500},
                                   headers={"Accept": fmt_type("json")})
            assert answer.status_code in (200, 408), answer.text
            assert answer.status_code == 408 or answer.json() == []
            return answer.status_code == 408 and answer.json()["error_code"] == 40801
        wait_for("the record that is not JSON refused", refused, timeout=30, interval=0)
    assert rest.http.post(as_json + "/positions", headers={"Content-Type": V2}, json={
        "offsets": [{"topic": "native-made", "partition": 0, "offset": 1}]}).status_code == 204
    assert [r["value"] for r in _records(rest.http, as_json, "json", 1)] == [[2]]
    # An instance's format is fixed: asking another gets 406 40601.
    mismatch = rest.http.get(as_json + "/records", headers={"Accept": fmt_type("binary")})
    assert (mismatch.status_code, mismatch.json()["error_code"]) == (406, 40601)
    for instance in (base, as_json):
        assert rest.http.delete(instance).status_code == 204


def test_records_land_on_the_partitions_a_java_producer_picks(rest: RestBroker) -> None:
    """Keyed records over HTTP land where librdkafka's Java-compatible murmur2 partitioner puts the
    same keys; keyless ones stick to one partition for a batch's worth (librdkafka's 1 MB), and the
    next request's go to another."""
    _create(rest.broker.bootstrap, "placed", 7)
    keys = [f"customer-{n}".encode() for n in range(40)] + [b"", bytes(range(256))]
    answer = rest.http.post("/topics/placed", headers={"Content-Type": fmt_type("binary")}, json={"records": [
        {"key": base64.b64encode(k).decode(), "value": "eA=="} for k in keys]})
    assert answer.status_code == 200, answer.text
    over_http = [o["partition"] for o in answer.json()["offsets"]]
    native: dict[int, int] = {}
    producer = Producer({"bootstrap.servers": rest.broker.bootstrap, "partitioner": "murmur2_random"})
    for i, key in enumerate(keys):
        producer.produce("placed", b"x", key, on_delivery=lambda err, msg, i=i: native.__setitem__(i, msg.partition()))
    assert producer.flush(30) == 0
    assert over_http == [native[i] for i in range(len(keys))]
    assert len(set(over_http)) > 3

    def keyless(size: int, count: int) -> list[int]:
        answer = rest.http.post("/topics/placed", headers={"Content-Type": fmt_type("binary")}, json={"records": [
            {"value": base64.b64encode(b"v" * size).decode()} for _ in range(count)]})
        assert answer.status_code == 200, answer.text
        return [o["partition"] for o in answer.json()["offsets"]]

    first, second = keyless(1000, 40), keyless(1000, 40)
    assert len(set(first)) == 1 and len(set(second)) == 1 and first[0] != second[0]
    # 1.5 MB: the first 1 MB on one partition, the rest on the next.
    runs = keyless(100_000, 15)
    assert [p for n, p in enumerate(runs) if n == 0 or runs[n - 1] != p] == [runs[0], runs[-1]], runs


def test_a_batch_too_large_for_the_topic_is_split_and_only_an_oversized_record_fails(rest: RestBroker) -> None:
    """A topic taking at most 20 KB per batch: a request of 12 records of 5 KB is split until each
    batch fits, and all are produced, in order; a 30 KB record among them alone fails, with
    MESSAGE_TOO_LARGE (50002), and the records around it are produced."""
    admin = AdminClient({"bootstrap.servers": rest.broker.bootstrap})
    admin.create_topics([NewTopic("narrow", 1, 1, config={"max.message.bytes": "20000"})])["narrow"].result(30)
    small = base64.b64encode(b"s" * 5000).decode()
    answer = rest.http.post("/topics/narrow", headers={"Content-Type": fmt_type("binary")},
                            json={"records": [{"value": small} for _ in range(12)]})
    assert answer.status_code == 200, answer.text
    assert [(o["offset"], o["error_code"]) for o in answer.json()["offsets"]] == [(n, None) for n in range(12)]

    big = base64.b64encode(b"B" * 30_000).decode()
    mixed = rest.http.post("/topics/narrow", headers={"Content-Type": fmt_type("binary")},
                           json={"records": [{"value": small}, {"value": big}, {"value": small}]}).json()["offsets"]
    assert [o["error_code"] for o in mixed] == [None, 50002, None], mixed
    assert "MESSAGE_TOO_LARGE" in mixed[1]["error"]
    assert [m.value() for m in _read_native(rest.broker.bootstrap, "narrow", 14)] == [b"s" * 5000] * 14


def test_avro_and_json_schema_records_are_registered_and_read_by_confluents_deserializers(rest: RestBroker) -> None:
    _create(rest.broker.bootstrap, "orders-avro")
    answer = rest.http.post("/topics/orders-avro", headers={"Content-Type": fmt_type("avro")}, json={
        "value_schema": json.dumps(ORDER),
        "records": [{"value": {"id": 1, "note": {"string": "first"}}}, {"value": {"id": 2, "note": None}}]})
    assert answer.status_code == 200, answer.text
    schema_id = answer.json()["value_schema_id"]
    registry = SchemaRegistryClient({"url": rest.registry_url})
    assert registry.get_latest_version("orders-avro-value").schema_id == schema_id
    # By id, without the schema.
    by_id = rest.http.post("/topics/orders-avro", headers={"Content-Type": fmt_type("avro")},
                           json={"value_schema_id": schema_id, "records": [{"value": {"id": 3, "note": None}}]})
    assert by_id.status_code == 200 and by_id.json()["value_schema_id"] == schema_id
    deserialize = AvroDeserializer(registry)
    values = [deserialize(m.value(), SerializationContext("orders-avro", MessageField.VALUE))
              for m in _read_native(rest.broker.bootstrap, "orders-avro", 3)]
    assert values == [{"id": 1, "note": "first"}, {"id": 2, "note": None}, {"id": 3, "note": None}]

    # Made by Confluent's serializer, read over HTTP in Avro's JSON encoding.
    serialize = AvroSerializer(registry, json.dumps(ORDER))
    _produce_native(rest.broker.bootstrap, "orders-avro",
                    [(None, serialize({"id": 4, "note": "native"}, SerializationContext("orders-avro",
                                                                                        MessageField.VALUE)))])
    base = _consumer(rest.http, "avro-readers", "avro-reader", "avro")
    rest.http.post(base + "/subscription", headers={"Content-Type": V2}, json={"topics": ["orders-avro"]})
    assert [r["value"] for r in _records(rest.http, base, "avro", 4)] == [
        {"id": 1, "note": {"string": "first"}}, {"id": 2, "note": None}, {"id": 3, "note": None},
        {"id": 4, "note": {"string": "native"}}]
    rest.http.delete(base)

    _create(rest.broker.bootstrap, "orders-json")
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    answer = rest.http.post("/topics/orders-json", headers={"Content-Type": fmt_type("jsonschema")}, json={
        "value_schema": json.dumps(schema), "records": [{"value": {"id": 7}}]})
    assert answer.status_code == 200, answer.text
    deserialize_json = JSONDeserializer(None, schema_registry_client=registry)
    [message] = _read_native(rest.broker.bootstrap, "orders-json", 1)
    assert deserialize_json(message.value(), SerializationContext("orders-json", MessageField.VALUE)) == {"id": 7}
    refused = rest.http.post("/topics/orders-json", headers={"Content-Type": fmt_type("jsonschema")}, json={
        "value_schema": json.dumps(schema), "records": [{"value": {"id": "seven"}}]})
    assert (refused.status_code, refused.json()["error_code"]) == (400, 400), refused.text
    missing = rest.http.post("/topics/orders-json", headers={"Content-Type": fmt_type("jsonschema")},
                             json={"records": [{"value": {"id": 7}}]})
    assert (missing.status_code, missing.json()["error_code"]) == (422, 42202)


PARCEL_PROTO = """syntax = "proto3";
package post;
import "google/protobuf/timestamp.proto";
message Parcel {
  int64 id = 1;
  string address = 2;
  google.protobuf.Timestamp sent = 3;
}
"""


def test_the_proxy_uses_the_registry_rest_schema_registry_url_names(tmp_path: Path) -> None:
    """With ``rest.schema.registry.url``, the broker's proxy registers and looks up schemas in that
    registry (here a standalone one on its own topic), not in a registry of its own."""
    broker = BrokerProcess(tmp_path / "logs", {"offsets.topic.replication.factor": "1"}, name="rest-elsewhere")
    broker.start()
    registry = StandaloneRegistry(broker.bootstrap, tmp_path / "registry.log", "_schemas_elsewhere")
    rest_port = free_port()
    broker.overrides.update({"rest.listener": f"http://127.0.0.1:{rest_port}",
                             "rest.schema.registry.url": registry.url})
    broker.restart()
    http = httpx.Client(base_url=f"http://127.0.0.1:{rest_port}", timeout=60)
    try:
        wait_for("the proxy answers", lambda: _answers(http), timeout=60)
        _create(broker.bootstrap, "elsewhere")
        answer = http.post("/topics/elsewhere", headers={"Content-Type": fmt_type("avro")},
                           json={"value_schema": json.dumps(ORDER), "records": [{"value": {"id": 1, "note": None}}]})
        assert answer.status_code == 200, answer.text
        schema_id = answer.json()["value_schema_id"]
        assert httpx.get(f"{registry.url}/subjects", timeout=30).json() == ["elsewhere-value"]
        assert json.loads(httpx.get(f"{registry.url}/schemas/ids/{schema_id}", timeout=30).json()["schema"]) == ORDER
    finally:
        http.close()
        assert registry.stop() == 0
        broker.close()


def test_protobuf_records_are_written_from_their_json_mapping_and_read_back(rest: RestBroker,
                                                                             tmp_path: Path) -> None:
    _create(rest.broker.bootstrap, "parcels")
    parcel = {"id": "7", "address": "1 Main St", "sent": "2026-11-27T08:00:00Z"}
    answer = rest.http.post("/topics/parcels", headers={"Content-Type": fmt_type("protobuf")},
                            json={"value_schema": PARCEL_PROTO, "records": [{"key": None, "value": parcel}]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["offsets"][0]["error_code"] is None
    module = _compiled_module(tmp_path, "rest_parcel", PARCEL_PROTO)
    deserialize = ProtobufDeserializer(module.Parcel, {"use.deprecated.format": False})
    [message] = _read_native(rest.broker.bootstrap, "parcels", 1)
    decoded = deserialize(message.value(), SerializationContext("parcels", MessageField.VALUE))
    assert (decoded.id, decoded.address, decoded.sent.ToJsonString()) == (7, "1 Main St", "2026-11-27T08:00:00Z")
    base = _consumer(rest.http, "parcel-readers", "parcel-reader", "protobuf")
    rest.http.post(base + "/subscription", headers={"Content-Type": V2}, json={"topics": ["parcels"]})
    assert [r["value"] for r in _records(rest.http, base, "protobuf", 1)] == [parcel]
    rest.http.delete(base)
    wrong = rest.http.post("/topics/parcels", headers={"Content-Type": fmt_type("protobuf")},
                           json={"value_schema": PARCEL_PROTO, "records": [{"value": {"weight": 3}}]})
    assert (wrong.status_code, wrong.json()["error_code"]) == (400, 400), wrong.text


def test_two_instances_split_a_group_and_committed_offsets_outlive_them(rest: RestBroker) -> None:
    _create(rest.broker.bootstrap, "shared", 2)
    for partition in (0, 1):
        _produce_native(rest.broker.bootstrap, "shared", [(None, f"p{partition}-{i}".encode()) for i in range(3)],
                        partition)
    first = _consumer(rest.http, "splitters", "one", **{"auto.commit.enable": "false"})
    second = _consumer(rest.http, "splitters", "two", **{"auto.commit.enable": "false"})
    for base in (first, second):
        rest.http.post(base + "/subscription", headers={"Content-Type": V2}, json={"topics": ["shared"]})

    def split() -> bool:
        for base in (first, second):  # polling is what lets a member take part in the rebalance
            rest.http.get(base + "/records", params={"timeout": 200}, headers={"Accept": fmt_type("binary")})
        owned = [rest.http.get(base + "/assignments").json()["partitions"] for base in (first, second)]
        return sorted(len(o) for o in owned) == [1, 1]

    wait_for("the two instances own one partition each", split, timeout=60, interval=0)
    [mine] = rest.http.get(first + "/assignments").json()["partitions"]
    rest.http.post(first + "/positions/beginning", headers={"Content-Type": V2}, json={"partitions": [mine]})
    read = _records(rest.http, first, "binary", 3)
    assert {r["partition"] for r in read} == {mine["partition"]}
    commit = rest.http.post(first + "/offsets", headers={"Content-Type": V2})
    assert (commit.status_code, commit.json()) == (200, [])
    committed = rest.http.request("GET", first + "/offsets", headers={"Content-Type": V2},
                                  json={"partitions": [mine]}).json()
    assert committed == {"offsets": [{**mine, "offset": 3, "metadata": ""}]}
    assert rest.http.delete(first).status_code == 204
    assert rest.http.delete(second).status_code == 204
    gone = rest.http.get(first + "/assignments")
    assert (gone.status_code, gone.json()["error_code"]) == (404, 40403)

    # The group's offsets outlive the instances: a new one starts after what was committed.
    third = _consumer(rest.http, "splitters", "three")
    rest.http.post(third + "/assignments", headers={"Content-Type": V2}, json={"partitions": [mine]})
    other = rest.http.request("GET", third + "/offsets", headers={"Content-Type": V2},
                              json={"partitions": [mine]}).json()
    assert other["offsets"][0]["offset"] == 3
    rest.http.delete(third)


@pytest.mark.parametrize(("method", "path", "headers", "body", "status", "code"), [
    ("GET", "/topics/nope", {}, None, 404, 40403),
    ("GET", "/topics/plain/partitions/9", {}, None, 404, 40402),
    ("POST", "/topics/nope", {"Content-Type": fmt_type("binary")}, {"records": [{"value": "eA=="}]}, 404, 40403),
    ("POST", "/topics/plain/partitions/9", {"Content-Type": fmt_type("binary")}, {"records": [{"value": "eA=="}]},
     404, 40402),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("binary")}, {"records": [{"value": "not base64!"}]},
     400, 400),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("binary")}, {"records": [{"value": 12}]}, 400, 400),
    ("POST", "/topics/plain", {"Content-Type": "text/plain"}, {"records": []}, 415, 415),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("binary")}, b"{not json", 400, 400),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("binary")}, {"records": "x"}, 422, 422),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("avro")}, {"records": [{"value": {"id": 1}}]}, 422, 42202),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("avro")},
     {"value_schema": "{\"type\": \"nonsense\"}", "records": [{"value": 1}]}, 422, 42205),
    ("GET", "/consumers/g/instances/missing/records", {}, None, 404, 40403),
    ("POST", "/topics/plain", {"Content-Type": fmt_type("avro")},
     {"value_schema": "\"int\"", "value_schema_id": 1, "records": [{"value": 1}]}, 400, 400),
    ("POST", "/consumers/g", {"Content-Type": V2}, {"format": "xml"}, 422, 42204),
    ("POST", "/consumers/g", {"Content-Type": V2}, {"auto.offset.reset": "sideways"}, 422, 42204),
    ("GET", "/nowhere", {}, None, 404, 404),
])
def test_bad_requests_get_confluents_error_codes(rest: RestBroker, method: str, path: str, headers: dict[str, str],
                                                 body: Any, status: int, code: int) -> None:
    if "plain" in path:
        wait_for("topic plain", lambda: rest.http.get("/topics/plain").status_code == 200 or _create_plain(rest))
    content = body if isinstance(body, bytes) else (None if body is None else json.dumps(body).encode())
    answer = rest.http.request(method, path, headers=headers, content=content)
    assert (answer.status_code, answer.json()["error_code"]) == (status, code), answer.text
    assert answer.json()["message"]


def _create_plain(rest: RestBroker) -> bool:
    try:
        _create(rest.broker.bootstrap, "plain", 3)
    except Exception:  # noqa: BLE001 - created meanwhile by another test
        pass
    return False


def test_a_full_proxy_refuses_more_instances_and_an_oversized_body_gets_413(tmp_path: Path) -> None:
    server = RestBroker(tmp_path, **{"rest.consumer.instances.max": "2", "rest.max.request.bytes": "2048",
                                     "rest.consumer.instance.timeout.ms": "3000"}).start()
    try:
        first = _consumer(server.http, "capped", "a")
        _consumer(server.http, "capped", "b")
        full = server.http.post("/consumers/capped", headers={"Content-Type": V2}, json={"name": "c"})
        assert (full.status_code, full.json()["error_code"]) == (429, 42901), full.text
        again = server.http.post("/consumers/capped", headers={"Content-Type": V2}, json={"name": "a"})
        assert (again.status_code, again.json()["error_code"]) == (409, 40902)
        big = server.http.post("/consumers/capped", headers={"Content-Type": V2},
                               content=json.dumps({"name": "x" * 4096}).encode())
        assert (big.status_code, big.json()["error_code"]) == (413, 413)
        # Idle for rest.consumer.instance.timeout.ms, both expire and make room.
        # (Asking after one would keep it alive: the broker's log says when they go.)
        wait_for("the instances expired", lambda: server.broker.stderr_text().count("of group capped expired") == 2,
                 timeout=30)
        assert server.http.get(first + "/assignments").status_code == 404
        _consumer(server.http, "capped", "c")
    finally:
        server.close()


def test_the_standalone_proxy_serves_apache_kafka(reference_kafka: BrokerProcess, tmp_path: Path) -> None:
    _create(reference_kafka.bootstrap, "rest-on-kafka", 2)
    proxy = StandaloneRest(reference_kafka.bootstrap, tmp_path / "rest.log")
    try:
        assert "rest-on-kafka" in proxy.http.get("/topics").json()
        partitions = proxy.http.get("/topics/rest-on-kafka/partitions").json()
        assert [p["partition"] for p in partitions] == [0, 1]
        answer = proxy.http.post("/topics/rest-on-kafka/partitions/1", headers={"Content-Type": fmt_type("json")},
                                 json={"records": [{"value": {"from": "http"}}]})
        assert answer.status_code == 200 and answer.json()["offsets"][0]["partition"] == 1, answer.text
        assert proxy.http.get("/topics/rest-on-kafka/partitions/1/offsets").json()["end_offset"] == 1
        base = _consumer(proxy.http, "on-kafka", "reader", "json")
        assigned = proxy.http.post(base + "/assignments", headers={"Content-Type": V2},
                                   json={"partitions": [{"topic": "rest-on-kafka", "partition": 1}]})
        assert assigned.status_code == 204, assigned.text
        assert [r["value"] for r in _records(proxy.http, base, "json", 1)] == [{"from": "http"}]
        assert proxy.http.delete(base).status_code == 204
    finally:
        assert proxy.stop() == 0


def test_openapi_and_metrics(rest: RestBroker) -> None:
    """``/openapi.json`` describes the routes (Starlette's generator, from the handlers' YAML), and
    ``/metrics`` counts requests by route, consumer instances, and records through HTTP."""
    paths = rest.http.get("/openapi.json").json()["paths"]
    assert "post" in paths["/topics/{topic}"] and "get" in paths["/consumers/{group}/instances/{instance}/records"]
    assert "post" in paths["/v3/clusters/{cluster_id}/topics/{topic}/records"]
    _create(rest.broker.bootstrap, "metered")
    rest.http.post("/topics/metered", headers={"Content-Type": fmt_type("json")},
                   json={"records": [{"value": 1}, {"value": 2}]})
    base = _consumer(rest.http, "metered-readers", "metered-reader", "json")
    rest.http.post(base + "/assignments", headers={"Content-Type": V2},
                   json={"partitions": [{"topic": "metered", "partition": 0}]})
    _records(rest.http, base, "json", 2)
    text = rest.http.get("/metrics").text

    def value(line_start: str) -> float:
        found = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start)]
        assert found, f"no {line_start} in /metrics"
        return found[0]

    assert value('pykafkad_rest_records_produced_total{topic="metered"}') == 2
    assert value('pykafkad_rest_records_consumed_total{topic="metered"}') == 2
    assert value('pykafkad_rest_requests_total{endpoint="/topics/{topic}",method="POST",status="200"}') >= 1
    assert value("pykafkad_rest_consumer_instances") >= 1
    assert value('pykafkad_rest_request_seconds_count{endpoint="/consumers/{group}/instances/{instance}/records"'
                 ',method="GET"}') >= 1
    rest.http.delete(base)


def test_the_console_links_a_topic_to_its_urls_in_the_proxy(rest: RestBroker) -> None:
    _create(rest.broker.bootstrap, "linked")
    page = httpx.get(f"http://127.0.0.1:{rest.console_port}/topics/linked", timeout=30).text
    cluster_id = rest.http.get("/v3/clusters").json()["data"][0]["cluster_id"]
    v3 = f"{rest.url}/v3/clusters/{cluster_id}/topics/linked"
    assert f'href="{v3}"' in page and f'href="{rest.url}/topics/linked"' in page
    assert httpx.get(v3, timeout=30).json()["kind"] == "KafkaTopic"


def test_the_proxy_answers_over_tls_with_the_brokers_pem_settings(rest: RestBroker, tmp_path: Path) -> None:
    """``rest.listener=https://...``: the broker's ``ssl.keystore.*`` (PEM) serve the proxy too; and
    ``pykafkad rest --certfile --keyfile`` on its own."""
    from compat_tests.certificates import Authority

    ca = Authority(tmp_path / "pki")
    key, cert, keystore = ca.issue("proxy", password=b"proxy-key-secret")
    port, console_port = free_port(), free_port()
    broker = BrokerProcess(tmp_path / "logs", {
        "rest.listener": f"https://127.0.0.1:{port}", "offsets.topic.replication.factor": "1",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore), "ssl.key.password": "proxy-key-secret",
        "metrics.listener": f"http://127.0.0.1:{console_port}", "metrics.console.enable": "true"},
        name="rest-tls")
    broker.start()
    try:
        trusted = ssl.create_default_context(cafile=str(ca.cert_path))
        with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=trusted, timeout=30) as https:
            wait_for("the proxy answers over TLS", lambda: _answers(https), timeout=60)
            assert https.get("/brokers").json() == {"brokers": [1]}
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/brokers", timeout=10).json()
        assert "rest proxy: serving on https://127.0.0.1" in broker.stderr_text()
        # The console links the topic to the proxy over https.
        _create(broker.bootstrap, "over-tls")
        page = httpx.get(f"http://127.0.0.1:{console_port}/topics/over-tls", timeout=30)
        assert page.status_code == 200 and f'href="https://127.0.0.1:{port}/topics/over-tls"' in page.text
    finally:
        broker.close()
    plain_key, plain_cert, _ = ca.issue("standalone")
    proxy = StandaloneRest(rest.broker.bootstrap, tmp_path / "standalone.log", "--certfile", str(plain_cert),
                           "--keyfile", str(plain_key), scheme="https",
                           verify=ssl.create_default_context(cafile=str(ca.cert_path)))
    try:
        wait_for("the standalone proxy answers over TLS", lambda: _answers(proxy.http), timeout=60)
        assert proxy.http.get("/brokers").json() == {"brokers": [1]}
    finally:
        assert proxy.stop() == 0
