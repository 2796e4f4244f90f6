"""The schema registry (issue 29, first part): Confluent Schema Registry's REST API for Avro, inside
the broker (``schema.registry.listener``) and on its own (``pykafkad registry``) against Apache
Kafka, driven by confluent-kafka's own ``SchemaRegistryClient``, ``AvroSerializer`` and
``AvroDeserializer`` and by plain HTTP for the status codes and error bodies.

Every schema lives in the compacted ``_schemas`` topic, in Confluent's record format: the tests read
the topic with a Kafka consumer, and restart the broker (cleanly and with kill -9) to see the
registry rebuilt from it with the same ids.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

from compat_tests.broker_process import REPO_ROOT, BrokerProcess, free_port
from compat_tests.service_process import ServiceProcess
from compat_tests.storage_support import wait_for
from pykafkad.coordinator.transaction.coordinator import HOLD_MARKERS_ENV

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
USER_V1 = {"type": "record", "name": "User", "namespace": "example",
           "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}
# BACKWARD-compatible with v1: the new field has a default.
USER_V2 = {**USER_V1, "fields": [*USER_V1["fields"], {"name": "email", "type": ["null", "string"], "default": None}]}
# Not BACKWARD-compatible with v2: a new field without a default.
USER_BAD = {**USER_V1, "fields": [*USER_V2["fields"], {"name": "phone", "type": "string"}]}


def _http(url: str, method: str = "GET", body: Any = None, content_type: str = CONTENT_TYPE,
          raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def _up(url: str) -> bool:
    try:
        return _http(url + "/")[0] == 200
    except OSError:
        return False


class RegistryBroker:
    def __init__(self, tmp: Path) -> None:
        self.http_port = free_port()
        self.broker = BrokerProcess(tmp / "logs", {"schema.registry.listener": f"http://127.0.0.1:{self.http_port}",
                                                   "offsets.topic.replication.factor": "1"}, name="registry-broker")
        self.url = f"http://127.0.0.1:{self.http_port}"

    def start(self) -> RegistryBroker:
        self.broker.start()
        wait_for("the registry answers", lambda: _up(self.url), timeout=60)
        return self

    def call(self, path: str, method: str = "GET", body: Any = None, **kw: Any) -> tuple[int, Any]:
        return _http(self.url + path, method, body, **kw)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryBroker]:
    found = RegistryBroker(tmp_path_factory.mktemp("registry")).start()
    yield found
    found.broker.close()


def _register(registry: RegistryBroker, subject: str, schema: dict[str, Any]) -> tuple[int, Any]:
    return registry.call(f"/subjects/{subject}/versions", "POST", {"schema": json.dumps(schema)})


def _produce(bootstrap: str, topic: str, serializer: Any, values: list[Any]) -> None:
    """Each value through a Confluent serializer (which registers its schema) into ``topic``."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, serializer(value, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0


def _read_back(bootstrap: str, topic: str, deserializer: Any, count: int) -> list[Any]:
    """The first ``count`` values of ``topic`` through a Confluent deserializer."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    try:
        wait_for(f"{count} values read from {topic}", lambda: got.extend(
            deserializer(m.value(), SerializationContext(topic, MessageField.VALUE))
            for m in consumer.consume(10, 1.0) if m.error() is None) or len(got) >= count)
    finally:
        consumer.close()
    return got


def _round_trip(url: str, bootstrap: str, topic: str) -> list[dict[str, Any]]:
    """Produce two users with AvroSerializer (auto-registering) and read them back with AvroDeserializer."""
    client = SchemaRegistryClient({"url": url})
    serializer = AvroSerializer(client, json.dumps(USER_V1))
    users = [{"name": "ada", "age": 36}, {"name": "alan", "age": 41}]
    _produce(bootstrap, topic, serializer, users)
    got = _read_back(bootstrap, topic, AvroDeserializer(SchemaRegistryClient({"url": url})), 2)
    assert got == users
    return got


def _schemas_topic(bootstrap: str) -> list[tuple[Any, Any]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "schemas-dump", "enable.partition.eof": True})
    consumer.assign([TopicPartition("_schemas", 0, 0)])
    records: list[tuple[Any, Any]] = []
    try:
        while True:
            msg = consumer.poll(10)
            assert msg is not None, "no end of _schemas"
            if msg.error() is not None:
                break
            records.append((json.loads(msg.key()), None if msg.value() is None else json.loads(msg.value())))
    finally:
        consumer.close()
    return records


def test_confluent_avro_serializer_round_trips_through_the_broker_and_the_schema_is_in_schemas(
        registry: RegistryBroker) -> None:
    _round_trip(registry.url, registry.broker.bootstrap, "users")
    status, versions = registry.call("/subjects/users-value/versions")
    assert (status, versions) == (200, [1])
    status, latest = registry.call("/subjects/users-value/versions/latest")
    assert status == 200 and latest["subject"] == "users-value" and latest["version"] == 1
    assert json.loads(latest["schema"]) == USER_V1 and "schemaType" not in latest
    # Kept in _schemas in Confluent's record format.
    keys = [(k, v) for k, v in _schemas_topic(registry.broker.bootstrap) if k.get("subject") == "users-value"]
    assert keys == [({"keytype": "SCHEMA", "subject": "users-value", "version": 1, "magic": 1},
                     {"subject": "users-value", "version": 1, "id": latest["id"], "schema": latest["schema"],
                      "deleted": False})]


def test_confluent_json_serializer_round_trips_and_json_schema_compatibility_is_checked(
        registry: RegistryBroker) -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
              "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
              "required": ["id"], "additionalProperties": False}
    client = SchemaRegistryClient({"url": registry.url})
    serializer = JSONSerializer(json.dumps(schema), client)
    orders = [{"id": 1, "item": "tea"}, {"id": 2, "item": "cake"}]
    _produce(registry.broker.bootstrap, "orders", serializer, orders)
    # The serializer validates before it sends: a bad order never reaches the broker.
    with pytest.raises(SerializationError):
        serializer({"item": "no id"}, SerializationContext("orders", MessageField.VALUE))
    deserializer = JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": registry.url}))
    got = _read_back(registry.broker.bootstrap, "orders", deserializer, 2)
    assert got == orders
    status, latest = registry.call("/subjects/orders-value/versions/latest")
    assert status == 200 and latest["schemaType"] == "JSON" and json.loads(latest["schema"]) == schema
    # A closed model gains an optional property: BACKWARD-compatible.  Then a required one: not.
    wider = {**schema, "properties": {**schema["properties"], "note": {"type": "string"}}}
    status, body = registry.call("/subjects/orders-value/versions", "POST",
                                 {"schemaType": "JSON", "schema": json.dumps(wider)})
    assert status == 200, body
    stricter = {**wider, "required": ["id", "note"]}
    status, body = registry.call("/subjects/orders-value/versions", "POST",
                                 {"schemaType": "JSON", "schema": json.dumps(stricter)})
    assert (status, body["error_code"]) == (409, 409) and "REQUIRED_ATTRIBUTE_ADDED" in body["message"]
    status, body = registry.call("/subjects/orders-value/versions", "POST",
                                 {"schemaType": "JSON", "schema": json.dumps({"type": "strung"})})
    assert (status, body["error_code"]) == (422, 42201)
    # An Avro schema in a JSON subject is another type: incompatible.
    status, body = _register(registry, "orders-value", USER_V1)
    assert (status, body["error_code"]) == (409, 409)
    assert registry.call("/schemas/types") == (200, ["AVRO", "JSON", "PROTOBUF"])


SHIPMENT_PROTO = """syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Shipment {
  int64 id = 1;
  string address = 2;
  google.protobuf.Timestamp sent = 3;
}
"""


def _compiled_module(tmp: Path, name: str, source: str) -> Any:
    """The Python module protoc makes of ``source`` (``<name>_pb2``), imported."""
    (tmp / f"{name}.proto").write_text(source)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}", f"--python_out={tmp}", f"{name}.proto"],
                   check=True, capture_output=True)
    sys.path.insert(0, str(tmp))
    try:
        return importlib.import_module(f"{name}_pb2")
    finally:
        sys.path.remove(str(tmp))


def test_confluent_protobuf_serializer_round_trips_and_protobuf_compatibility_is_checked(
        registry: RegistryBroker, tmp_path: Path) -> None:
    module = _compiled_module(tmp_path, "shipment", SHIPMENT_PROTO)
    client = SchemaRegistryClient({"url": registry.url})
    serializer = ProtobufSerializer(module.Shipment, client, {"use.deprecated.format": False})
    shipments = [module.Shipment(id=7, address="1 Kafka Road"), module.Shipment(id=8, address="2 Trio Street")]
    shipments[0].sent.FromSeconds(1_700_000_000)
    _produce(registry.broker.bootstrap, "shipments", serializer, shipments)
    deserializer = ProtobufDeserializer(module.Shipment, {"use.deprecated.format": False})
    got = _read_back(registry.broker.bootstrap, "shipments", deserializer, 2)
    assert got == shipments
    status, latest = registry.call("/subjects/shipments-value/versions/latest")
    assert status == 200 and latest["schemaType"] == "PROTOBUF"
    # Served back as the serialized descriptor the Python client asks for.
    status, by_id = registry.call(f"/schemas/ids/{latest['id']}?format=serialized")
    assert status == 200 and by_id["schemaType"] == "PROTOBUF"
    # A .proto source registered by hand: a field's type changed is refused, a field added is not.
    changed = SHIPMENT_PROTO.replace("string address = 2;", "int32 address = 2;")
    status, body = registry.call("/subjects/shipments-value/versions", "POST",
                                 {"schemaType": "PROTOBUF", "schema": changed})
    assert (status, body["error_code"]) == (409, 409) and "FIELD_SCALAR_KIND_CHANGED" in body["message"]
    added = SHIPMENT_PROTO.replace("}\n", "  string carrier = 4;\n}\n")
    status, body = registry.call("/subjects/shipments-value/versions", "POST",
                                 {"schemaType": "PROTOBUF", "schema": added})
    assert status == 200, body
    status, body = registry.call("/subjects/shipments-value/versions", "POST",
                                 {"schemaType": "PROTOBUF", "schema": "message {"})
    assert (status, body["error_code"]) == (422, 42201) and "schema.proto" in body["message"]


def test_compatibility_is_checked_on_registration_and_on_request(registry: RegistryBroker) -> None:
    assert _register(registry, "compat-value", USER_V1)[0] == 200
    status, body = _register(registry, "compat-value", USER_V2)
    assert status == 200
    status, body = _register(registry, "compat-value", USER_BAD)
    assert status == 409 and body["error_code"] == 409
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in body["message"] and "phone" in body["message"]
    status, verdict = registry.call("/compatibility/subjects/compat-value/versions/latest?verbose=true", "POST",
                                    {"schema": json.dumps(USER_BAD)})
    assert status == 200 and verdict["is_compatible"] is False and verdict["messages"]
    status, verdict = registry.call("/compatibility/subjects/compat-value/versions/latest", "POST",
                                    {"schema": json.dumps(USER_V2)})
    assert (status, verdict) == (200, {"is_compatible": True})
    # NONE for this subject lets it in; the global level is untouched.
    assert registry.call("/config/compat-value", "PUT", {"compatibility": "NONE"}) == (200, {"compatibility": "NONE"})
    assert registry.call("/config/compat-value") == (200, {"compatibilityLevel": "NONE"})
    assert registry.call("/config") == (200, {"compatibilityLevel": "BACKWARD"})
    assert _register(registry, "compat-value", USER_BAD)[0] == 200
    assert registry.call("/subjects/compat-value/versions") == (200, [1, 2, 3])


def test_one_schema_keeps_one_id_across_subjects_and_a_registered_schema_is_found(registry: RegistryBroker) -> None:
    first = _register(registry, "same-a", USER_V1)[1]["id"]
    assert _register(registry, "same-b", USER_V1)[1]["id"] == first
    # Whitespace does not make another schema.
    spaced = registry.call("/subjects/same-b/versions", "POST", {"schema": json.dumps(USER_V1, indent=4)})[1]
    assert spaced["id"] == first
    status, found = registry.call("/subjects/same-a", "POST", {"schema": json.dumps(USER_V1)})
    assert status == 200 and (found["subject"], found["version"], found["id"]) == ("same-a", 1, first)
    holders = registry.call(f"/schemas/ids/{first}/versions")[1]
    assert {"subject": "same-a", "version": 1} in holders and {"subject": "same-b", "version": 1} in holders
    assert {"same-a", "same-b"} <= set(registry.call(f"/schemas/ids/{first}/subjects")[1])
    client = SchemaRegistryClient({"url": registry.url})
    assert client.get_schema(first).schema_str == json.dumps(USER_V1, separators=(",", ":"))
    assert client.lookup_schema("same-a", Schema(json.dumps(USER_V1), "AVRO")).version == 1


def test_soft_then_permanent_delete_and_ids_are_never_reused(registry: RegistryBroker) -> None:
    made = _register(registry, "gone-value", {"type": "record", "name": "Gone", "fields": []})[1]["id"]
    # Permanent first is refused: Confluent wants a soft delete before.
    status, body = registry.call("/subjects/gone-value?permanent=true", "DELETE")
    assert (status, body["error_code"]) == (404, 40405)
    assert registry.call("/subjects/gone-value", "DELETE") == (200, [1])
    assert "gone-value" not in registry.call("/subjects")[1]
    assert "gone-value" in registry.call("/subjects?deleted=true")[1]
    status, body = registry.call("/subjects/gone-value/versions/1")
    assert (status, body["error_code"]) == (404, 40401)
    assert registry.call("/subjects/gone-value/versions/1?deleted=true")[1]["id"] == made
    assert registry.call("/subjects/gone-value?permanent=true", "DELETE") == (200, [1])
    assert "gone-value" not in registry.call("/subjects?deleted=true")[1]
    status, body = registry.call(f"/schemas/ids/{made}")
    assert (status, body["error_code"]) == (404, 40403)
    # The next new schema gets a higher id, never the deleted one's.
    fresh = _register(registry, "fresh-value", {"type": "record", "name": "Fresh", "fields": []})[1]["id"]
    assert fresh > made


@pytest.mark.parametrize(("path", "method", "body", "status", "code"), [
    ("/subjects/none-such/versions", "GET", None, 404, 40401),
    ("/subjects/users-value/versions/99", "GET", None, 404, 40402),
    ("/subjects/users-value/versions/x1", "GET", None, 422, 42202),
    ("/schemas/ids/987654", "GET", None, 404, 40403),
    ("/subjects/bad-value/versions", "POST", {"schema": "{\"type\": \"record\", \"name\": \"B\"}"}, 422, 42201),
    ("/subjects/bad-value/versions", "POST", {"schema": "not json"}, 422, 42201),
    ("/subjects/bad-value/versions", "POST", {"schema": json.dumps({"type": "nope"})}, 422, 42201),
    ("/subjects/bad-value/versions", "POST", {"schemaType": "XML", "schema": "{}"}, 422, 422),
    ("/subjects/bad-value/versions", "POST", {"nothing": 1}, 422, 422),
    ("/config", "PUT", {"compatibility": "SIDEWAYS"}, 422, 42203),
    ("/mode", "PUT", {"mode": "SOMETIMES"}, 422, 42204),
    ("/no/such/path", "GET", None, 404, 404),
])
def test_bad_requests_get_confluents_error_codes(registry: RegistryBroker, path: str, method: str, body: Any,
                                                 status: int, code: int) -> None:
    if path.startswith("/subjects/users-value"):
        _register(registry, "users-value", USER_V1)
    got_status, got = registry.call(path, method, body)
    assert (got_status, got["error_code"]) == (status, code), got
    assert isinstance(got["message"], str) and got["message"]


def test_malformed_too_large_and_wrongly_typed_bodies(registry: RegistryBroker) -> None:
    status, body = registry.call("/subjects/x/versions", "POST", raw=b"{not json")
    assert (status, body["error_code"]) == (400, 400)
    status, body = registry.call("/subjects/x/versions", "POST", raw=b"{}" + b" " * (2 * 1024 * 1024))
    assert (status, body["error_code"]) == (413, 413)
    status, body = registry.call("/subjects/x/versions", "POST", {"schema": "{}"}, content_type="text/plain")
    assert (status, body["error_code"]) == (415, 415)
    # The registry still answers after each.
    assert registry.call("/subjects")[0] == 200


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pykafkad", "schema", *args, "--registry", url], cwd=REPO_ROOT,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True, text=True,
                          timeout=60, check=False)


def test_the_schema_command_lists_gets_registers_checks_and_deletes(registry: RegistryBroker, tmp_path: Path) -> None:
    v1, bad = tmp_path / "v1.avsc", tmp_path / "bad.avsc"
    v1.write_text(json.dumps(USER_V1))
    bad.write_text(json.dumps(USER_BAD))
    done = _cli(registry.url, "register", "cli-value", "--file", str(v1))
    assert done.returncode == 0 and "cli-value: id" in done.stdout and "version 1" in done.stdout, done.stderr
    listed = _cli(registry.url, "list", "--prefix", "cli-")
    assert listed.returncode == 0 and "SUBJECT" in listed.stdout and "cli-value" in listed.stdout
    assert "BACKWARD" in listed.stdout
    got = json.loads(_cli(registry.url, "get", "cli-value", "--json").stdout)
    assert got["subject"] == "cli-value" and json.loads(got["schema"]) == USER_V1
    checked = _cli(registry.url, "check", "cli-value", "--file", str(bad))
    assert checked.returncode == 1 and "NOT compatible" in checked.stdout and "phone" in checked.stdout
    refused = _cli(registry.url, "register", "cli-value", "--file", str(bad))
    assert refused.returncode == 1 and "error 409" in refused.stderr and "pykafkad schema check" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert _cli(registry.url, "config", "cli-value", "--set", "none").stdout.strip() == "cli-value: NONE"
    assert _cli(registry.url, "register", "cli-value", "--file", str(bad)).returncode == 0
    deleted = _cli(registry.url, "delete", "cli-value", "--version", "2")
    assert deleted.returncode == 0 and "soft-deleted" in deleted.stdout
    missing = _cli(registry.url, "get", "nothing-here")
    assert missing.returncode == 1 and "error 40401" in missing.stderr and "pykafkad schema list" in missing.stderr
    down = _cli(f"http://127.0.0.1:{free_port()}", "list")
    assert down.returncode == 1 and "cannot reach the schema registry" in down.stderr
    assert "Traceback" not in down.stderr


def test_a_restart_and_a_kill_9_rebuild_the_registry_from_its_topic(tmp_path: Path) -> None:
    own = RegistryBroker(tmp_path).start()
    try:
        ids = {s: _register(own, s, schema)[1]["id"] for s, schema in
               (("r-a", USER_V1), ("r-b", {"type": "record", "name": "B", "fields": []}))}
        assert _register(own, "r-a", USER_V2)[0] == 200
        assert own.call("/subjects/r-b", "DELETE") == (200, [1])
        assert own.call("/config/r-a", "PUT", {"compatibility": "FULL"})[0] == 200
        paths = ("/subjects", "/subjects?deleted=true", "/subjects/r-a/versions", f"/schemas/ids/{ids['r-a']}",
                 "/config/r-a")
        for stop in (own.broker.stop, own.broker.kill9):
            before = {path: own.call(path) for path in paths}
            stop()
            own.start()
            assert {path: own.call(path) for path in paths} == before
            # A new schema still gets a new id after the replay.
            new_id = _register(own, f"r-new-{own.broker.starts}", {"type": "fixed", "name": f"F{own.broker.starts}",
                                                                   "size": 4})[1]["id"]
            assert new_id > max(ids.values())
            ids[f"new-{own.broker.starts}"] = new_id
    finally:
        own.broker.close()


class StandaloneRegistry(ServiceProcess):
    """``pykafkad registry`` as a process, against ``bootstrap``."""
    service = "registry"

    def __init__(self, bootstrap: str, log_path: Path, topic: str = "_schemas") -> None:
        super().__init__(bootstrap, log_path, ["--topic", topic])

    def answers(self) -> bool:
        return _up(self.url)


def test_two_instances_on_one_topic_never_hand_out_one_id_twice(registry: RegistryBroker, tmp_path: Path) -> None:
    """The broker's registry and a standalone one write the same _schemas at once: each write is a
    transaction of one shared transactional id, so a write decided on a stale state is fenced and
    decided again.  Every schema gets its own id, and both instances serve all of them."""
    other = StandaloneRegistry(registry.broker.bootstrap, tmp_path / "other.log")
    try:
        urls = [registry.url, other.url]
        rounds, per_round = 4, 16
        schemas = [{"type": "record", "name": f"Both{i}", "fields": [{"name": "n", "type": "int"}]}
                   for i in range(rounds * per_round)]
        ids: dict[int, int] = {}

        def register(i: int, start: threading.Barrier) -> None:
            start.wait(30)
            status, body = _http(f"{urls[i % 2]}/subjects/both-{i}/versions", "POST",
                                 {"schema": json.dumps(schemas[i])})
            assert status == 200, body
            ids[i] = body["id"]

        # Bursts of simultaneous registrations, half on each instance.
        for r in range(rounds):
            start = threading.Barrier(per_round)
            threads = [threading.Thread(target=register, args=(i, start))
                       for i in range(r * per_round, (r + 1) * per_round)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
        assert len(ids) == len(schemas)
        assert len(set(ids.values())) == len(schemas), ids
        for url in urls:
            for i, schema_id in ids.items():
                wait_for(f"id {schema_id} on {url}",
                         lambda u=url, s=schema_id: _http(f"{u}/schemas/ids/{s}")[0] == 200, timeout=30)
                assert json.loads(_http(f"{url}/schemas/ids/{schema_id}")[1]["schema"]) == schemas[i]
    finally:
        assert other.stop() == 0


def test_a_registration_is_answered_only_once_its_registry_has_read_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """EndTxn is answered before the transaction's markers are written, and until they are, the
    topic's last stable offset stays before the registry's own records.  A registry that answered
    then, having read only up to that offset, could not find the id it had just answered, and its
    next registration, decided on a state without it, handed out the same id to another schema (seen
    under load on three brokers).  The broker here holds the markers back (a test-only switch) to
    make that while long."""
    hold = tmp_path / "hold-markers"
    monkeypatch.setenv(HOLD_MARKERS_ENV, str(hold))
    registry = RegistryBroker(tmp_path).start()
    try:
        first_answered = threading.Event()
        seen: dict[str, Any] = {}

        def register_two() -> None:
            seen["first"] = _register(registry, "held-a", {"type": "record", "name": "HeldA", "fields": []})
            first_answered.set()
            seen["lookup"] = registry.call(f"/schemas/ids/{seen['first'][1].get('id')}")
            seen["second"] = _register(registry, "held-b", {"type": "record", "name": "HeldB", "fields": []})

        hold.touch()
        writer = threading.Thread(target=register_two)
        writer.start()
        # The registry must not answer while the markers are held.  Whether it waits cannot be
        # seen from outside, so the hold is kept a few seconds: a registry that answers in that
        # while fails the assertions below; one that waits answers once the hold is gone.
        first_answered.wait(3)
        hold.unlink()
        writer.join(60)
        assert seen["first"][0] == 200 and seen["second"][0] == 200, seen
        assert seen["lookup"][0] == 200, seen
        assert json.loads(seen["lookup"][1]["schema"])["name"] == "HeldA"
        assert seen["first"][1]["id"] != seen["second"][1]["id"], seen
    finally:
        if hold.exists():
            hold.unlink()
        registry.broker.close()


def test_the_standalone_registry_serves_apache_kafka(reference_kafka: BrokerProcess, tmp_path: Path) -> None:
    standalone = StandaloneRegistry(reference_kafka.bootstrap, tmp_path / "registry.log", "_schemas_standalone")
    try:
        _round_trip(standalone.url, reference_kafka.bootstrap, "standalone-users")
        with pytest.raises(SchemaRegistryError) as refused:
            SchemaRegistryClient({"url": standalone.url}).register_schema("standalone-users-value",
                                                                          Schema(json.dumps(USER_BAD), "AVRO"))
        assert refused.value.http_status_code == 409
    finally:
        assert standalone.stop() == 0


def test_openapi_cluster_id_and_metrics(registry: RegistryBroker) -> None:
    """``/openapi.json`` describes every route (Starlette's generator, from the handlers' YAML
    docstrings), ``/v1/metadata/id`` names the Kafka cluster, and ``/metrics`` counts requests by
    route and reports the subjects and schemas it holds."""
    status, spec = registry.call("/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    paths = spec["paths"]
    for path, method in [("/subjects/{subject}/versions", "post"), ("/subjects/{subject}/versions/{version}",
                                                                      "delete"),
                         ("/schemas/ids/{id}", "get"), ("/config/{subject}", "put"), ("/mode", "get"),
                         ("/compatibility/subjects/{subject}/versions/{version}", "post"), ("/v1/metadata/id", "get")]:
        operation = paths[path][method]
        assert operation["summary"] and operation["responses"], (path, method)
        assert [p["name"] for p in operation["parameters"] if p["in"] == "path"] == re.findall(r"{(\w+)}", path)
    assert "/openapi.json" not in paths and "/metrics" not in paths
    status, scope = registry.call("/v1/metadata/id")
    admin = AdminClient({"bootstrap.servers": registry.broker.bootstrap})
    assert status == 200 and scope["scope"]["clusters"]["kafka-cluster"] == admin.list_topics(timeout=10).cluster_id
    assert _register(registry, "metered-value", {"type": "string"})[0] == 200
    assert registry.call("/subjects/no-such-subject/versions")[0] == 404
    with urllib.request.urlopen(registry.url + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    assert re.search(r'pykafkad_schema_registry_requests_total\{endpoint="/subjects/\{subject:path\}/versions",'
                     r'method="POST",status="200"\} [1-9]', text), text[-2000:]
    assert re.search(r'pykafkad_schema_registry_requests_total\{endpoint="/subjects/\{subject:path\}/versions",'
                     r'method="GET",status="404"\} [1-9]', text)
    subjects = re.search(r"^pykafkad_schema_registry_subjects (\d+)", text, re.M)
    assert subjects is not None and int(subjects.group(1)) >= 1
    assert re.search(r'^pykafkad_schema_registry_schemas\{type="AVRO"\} [1-9]', text, re.M)
    assert re.search(r"^pykafkad_schema_registry_lag_records 0", text, re.M)


def _metric_value(url: str, name: str) -> float | None:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        found = re.search(rf"^{name} (\S+)$", answer.read().decode(), re.M)
    return float(found.group(1)) if found else None


def test_one_primary_takes_the_writes_and_another_takes_over_after_a_kill_9(tmp_path: Path) -> None:
    """The registries on one topic elect one primary through a consumer group; the others forward
    their writes to it.  kill -9 of the primary: the group drops it after its session timeout and
    another instance takes the writes; no id is handed out twice, every instance serves every id."""
    broker = BrokerProcess(tmp_path / "logs", {"offsets.topic.replication.factor": "1"}, name="election-broker")
    broker.start()
    registries: list[StandaloneRegistry] = []
    try:
        registries = [StandaloneRegistry(broker.bootstrap, tmp_path / f"r{i}.log") for i in range(3)]
        urls = [r.url for r in registries]
        wait_for("one primary", lambda: sum(_metric_value(u, "pykafkad_schema_registry_primary") or 0
                                            for u in urls) == 1, timeout=60)
        primary = next(r for r in registries if _metric_value(r.url, "pykafkad_schema_registry_primary") == 1)
        ids = {}
        for i, url in enumerate(urls):
            status, body = _http(f"{url}/subjects/elected-{i}/versions", "POST", {"schema": json.dumps(
                {"type": "record", "name": f"Elected{i}", "fields": [{"name": "n", "type": "int"}]})})
            assert status == 200, body
            ids[f"elected-{i}"] = body["id"]
        # The two that are not primary forwarded their write.
        for url in urls:
            forwarded = _metric_value(url, "pykafkad_schema_registry_forwarded_requests_total") or 0
            assert forwarded == (0 if url == primary.url else 1), (url, primary.url)
        primary.proc.kill()
        primary.proc.wait()
        survivors = [u for u in urls if u != primary.url]
        wait_for("a new primary", lambda: sum(_metric_value(u, "pykafkad_schema_registry_primary") or 0
                                              for u in survivors) == 1, timeout=60)
        for i, url in enumerate(survivors):
            status, body = _http(f"{url}/subjects/after-{i}/versions", "POST", {"schema": json.dumps(
                {"type": "record", "name": f"After{i}", "fields": [{"name": "n", "type": "int"}]})})
            assert status == 200, body
            ids[f"after-{i}"] = body["id"]
        assert len(set(ids.values())) == len(ids), ids
        for url in survivors:
            for subject, schema_id in ids.items():
                wait_for(f"{subject} on {url}", lambda u=url, s=schema_id: _http(f"{u}/schemas/ids/{s}")[0] == 200,
                         timeout=30)
    finally:
        for registry in registries:
            if registry.proc.poll() is None:
                assert registry.stop() == 0
            else:
                registry._log.close()
        broker.close()


def test_import_mode_keeps_the_ids_and_versions_of_an_export(registry: RegistryBroker) -> None:
    """IMPORT mode, as a migration from another registry uses it: schemas registered with their id
    and version, no compatibility check; ids handed out afterwards never meet an imported one."""
    assert _register(registry, "before-import-value", {"type": "string"})[0] == 200
    schema = {"type": "record", "name": "Imported", "fields": [{"name": "n", "type": "int"}]}
    body = {"schema": json.dumps(schema), "id": 900, "version": 7}
    status, refused = registry.call("/subjects/imported-value/versions", "POST", body)
    assert (status, refused["error_code"]) == (422, 42205) and "not in import mode" in refused["message"]
    # Not on a registry that holds schemas, unless forced; a subject of its own may be set.
    status, refused = registry.call("/mode", "PUT", {"mode": "IMPORT"})
    assert (status, refused["error_code"]) == (422, 42205), refused
    assert registry.call("/mode/imported-value", "PUT", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert registry.call("/subjects/imported-value/versions", "POST", body) == (200, {"id": 900})
    status, found = registry.call("/subjects/imported-value/versions/7")
    assert status == 200 and (found["id"], found["version"]) == (900, 7)
    # The same again is answered with its id; another schema under that id is refused.
    assert registry.call("/subjects/imported-value/versions", "POST", body) == (200, {"id": 900})
    other = {"schema": json.dumps({**schema, "name": "Other"}), "id": 900, "version": 8}
    status, refused = registry.call("/subjects/imported-value/versions", "POST", other)
    assert (status, refused["error_code"]) == (422, 42205) and "id 900" in refused["message"]
    # Without an id there is nothing to import.
    status, refused = registry.call("/subjects/imported-value/versions", "POST", {"schema": json.dumps(schema)})
    assert (status, refused["error_code"]) == (422, 42205)
    assert registry.call("/mode/imported-value", "DELETE")[0] == 200
    status, fresh = _register(registry, "after-import-value", {"type": "record", "name": "AfterImport",
                                                                 "fields": [{"name": "n", "type": "int"}]})
    assert status == 200 and fresh["id"] > 900


ADDRESS = {"type": "record", "name": "Address", "namespace": "example",
           "fields": [{"name": "city", "type": "string"}]}
CUSTOMER = {"type": "record", "name": "Customer", "namespace": "example",
            "fields": [{"name": "name", "type": "string"}, {"name": "home", "type": "example.Address"}]}
ADDRESS_PROTO = 'syntax = "proto3";\npackage geo;\nmessage Place {\n  string city = 1;\n}\n'
VISIT_PROTO = ('syntax = "proto3";\npackage trips;\nimport "place.proto";\nimport "google/protobuf/timestamp.proto";\n'
               'message Visit {\n  geo.Place place = 1;\n  google.protobuf.Timestamp at = 2;\n}\n')


def test_avro_references_resolve_are_answered_and_protect_what_they_name(registry: RegistryBroker,
                                                                         tmp_path: Path) -> None:
    """A schema naming a type of another subject's version: refused without the reference, taken
    with it, served with it, round-tripped by Confluent's serializers; the referenced version names
    its referrer and cannot be deleted while it is referenced."""
    status, address = _register(registry, "address-value", ADDRESS)
    assert status == 200, address
    status, refused = _register(registry, "customer-value", CUSTOMER)
    assert (status, refused["error_code"]) == (422, 42201), refused
    ref = {"name": "example.Address", "subject": "address-value", "version": 1}
    status, missing = registry.call("/subjects/customer-value/versions", "POST", {
        "schema": json.dumps(CUSTOMER), "references": [{**ref, "version": 9}]})
    assert (status, missing["error_code"]) == (422, 42201) and "no version 9" in missing["message"]
    status, customer = registry.call("/subjects/customer-value/versions", "POST", {
        "schema": json.dumps(CUSTOMER), "references": [ref]})
    assert status == 200, customer
    status, by_id = registry.call(f"/schemas/ids/{customer['id']}")
    assert status == 200 and by_id["references"] == [ref]
    assert registry.call("/subjects/address-value/versions/1/referencedby") == (200, [customer["id"]])
    status, held = registry.call("/subjects/address-value/versions/1", "DELETE")
    assert (status, held["error_code"]) == (422, 42206), held
    # Confluent's serializers resolve the reference both ways.
    client = SchemaRegistryClient({"url": registry.url})
    registered = client.get_latest_version("customer-value")
    serializer = AvroSerializer(client, registered.schema, conf={"auto.register.schemas": False,
                                                                 "use.latest.version": True})
    people = [{"name": "ada", "home": {"city": "London"}}]
    _produce(registry.broker.bootstrap, "customer", serializer, people)
    assert _read_back(registry.broker.bootstrap, "customer", AvroDeserializer(client), 1) == people
    # pykafkad schema register --reference NAME=SUBJECT:VERSION
    schema_file = tmp_path / "customer.avsc"
    schema_file.write_text(json.dumps(CUSTOMER))
    done = _cli(registry.url, "register", "customer-copy-value", "--file", str(schema_file),
                "--reference", "example.Address=address-value:1")
    assert done.returncode == 0 and "customer-copy-value: id" in done.stdout, done.stderr
    bad = _cli(registry.url, "register", "customer-copy-value", "--file", str(schema_file), "--reference", "oops")
    assert bad.returncode == 2 and "NAME=SUBJECT:VERSION" in bad.stderr


def test_protobuf_imports_are_registered_as_references_by_the_serializer(registry: RegistryBroker,
                                                                         tmp_path: Path) -> None:
    """confluent-kafka's ProtobufSerializer registers an imported file under its own subject and the
    message's schema with a reference to it; the registry takes both and serves them back to the
    deserializer."""
    _compiled_module(tmp_path, "place", ADDRESS_PROTO)
    module = _compiled_module(tmp_path, "visit", VISIT_PROTO)
    client = SchemaRegistryClient({"url": registry.url})
    serializer = ProtobufSerializer(module.Visit, client, {"use.deprecated.format": False})
    visit = module.Visit()
    visit.place.city = "Lisbon"
    visit.at.FromSeconds(1_700_000_000)
    _produce(registry.broker.bootstrap, "visits", serializer, [visit])
    got = _read_back(registry.broker.bootstrap, "visits",
                     ProtobufDeserializer(module.Visit, {"use.deprecated.format": False}), 1)
    assert got == [visit]
    status, latest = registry.call("/subjects/visits-value/versions/latest")
    assert status == 200 and [r["name"] for r in latest["references"]] == ["place.proto"]
    status, place = registry.call(f"/subjects/{latest['references'][0]['subject']}/versions/latest")
    assert status == 200 and place["schemaType"] == "PROTOBUF"


def test_a_loopback_registry_answers_only_requests_naming_a_loopback_host(registry: RegistryBroker) -> None:
    """Without an authorizer, a registry bound to 127.0.0.1 refuses a request that names another
    host (a web page of another site whose name points at 127.0.0.1: DNS rebinding), as the
    console does; 127.0.0.1 and localhost are answered."""
    port = registry.url.rsplit(":", 1)[1]
    for host, status in ((f"evil.example:{port}", 403), (f"localhost:{port}", 200), (f"127.0.0.1:{port}", 200)):
        request = urllib.request.Request(registry.url + "/subjects", headers={"Host": host})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                got, body = answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as e:
            got, body = e.code, json.loads(e.read())
        assert got == status, (host, body)
        if status == 403:
            assert body["error_code"] == 40301 and "127.0.0.1" in body["message"]


def test_references_that_form_a_cycle_are_refused_with_the_cycle_named(registry: RegistryBroker) -> None:
    """References to a subject's latest version (-1) can close a loop after the fact: a schema
    that leads into it is refused with 42201 naming the cycle, not a nesting limit or a 500."""
    def register(subject: str, schema: dict[str, Any], refs: list[dict[str, Any]]) -> tuple[int, Any]:
        return registry.call(f"/subjects/{subject}/versions", "POST", {
            "schemaType": "JSON", "schema": json.dumps(schema), "references": refs})

    assert registry.call("/config/cyc-a", "PUT", {"compatibility": "NONE"})[0] == 200
    assert register("cyc-a", {"type": "object"}, [])[0] == 200
    status, body = register("cyc-b", {"type": "object", "properties": {"a": {"$ref": "a.json"}}},
                            [{"name": "a.json", "subject": "cyc-a", "version": -1}])
    assert status == 200, body
    # cyc-a v2 names cyc-b's latest, which names cyc-a's latest: v2 itself, once it is registered.
    status, body = register("cyc-a", {"type": "object", "properties": {"b": {"$ref": "b.json"}}},
                            [{"name": "b.json", "subject": "cyc-b", "version": -1}])
    assert status == 200, body
    status, body = register("cyc-c", {"type": "object", "properties": {"b": {"$ref": "b.json"}}},
                            [{"name": "b.json", "subject": "cyc-b", "version": -1}])
    assert (status, body["error_code"]) == (422, 42201), body
    assert body["message"].endswith("the references form a cycle: cyc-b v1 -> cyc-a v2 -> cyc-b v1"), body


def test_json_compatibility_follows_references_into_the_schemas_they_name(registry: RegistryBroker) -> None:
    def register(subject: str, schema: dict[str, Any], refs: list[dict[str, Any]]) -> tuple[int, Any]:
        return registry.call(f"/subjects/{subject}/versions?verbose=true", "POST", {
            "schemaType": "JSON", "schema": json.dumps(schema), "references": refs})

    assert registry.call("/config/refd-address", "PUT", {"compatibility": "NONE"})[0] == 200
    assert register("refd-address", {"type": "object", "properties": {"city": {"type": "string"}}}, [])[0] == 200
    person = {"type": "object", "properties": {"address": {"$ref": "address.json"}}}
    assert register("refd-person", person, [{"name": "address.json", "subject": "refd-address", "version": 1}])[0] \
        == 200
    assert register("refd-address", {"type": "object", "properties": {"city": {"type": "integer"}}}, [])[0] == 200
    # The same person schema, now naming the address version whose city is a number: not BACKWARD.
    status, body = register("refd-person", person,
                            [{"name": "address.json", "subject": "refd-address", "version": 2}])
    assert (status, body["error_code"]) == (409, 409), body
    assert "TYPE_CHANGED" in body["message"] and "#/properties/address/properties/city/type" in body["message"], body
