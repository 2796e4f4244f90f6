"""Keys and values in the embedded formats, both ways: ``binary`` and ``json`` as such, and the
schema formats (``avro``, ``jsonschema``, ``protobuf``) in the schema registry's wire format
(magic byte 0, the schema id, the encoded datum), their schemas registered and looked up over the
registry's REST API.

As Confluent's proxy does, Avro data is written in Avro's JSON encoding (a union's branch named:
``{"string": "x"}``) and read back in it; a Protobuf value is its message's JSON mapping.  A
schema given in a request is registered under ``<topic>-key`` or ``<topic>-value``
(TopicNameStrategy); an id names one already registered."""

from __future__ import annotations

import functools
import io
import json
import struct
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import fastavro
import trio
from google.protobuf import json_format, message_factory
from google.protobuf.message import EncodeError
from jsonschema.exceptions import ValidationError
from jsonschema.validators import Draft7Validator, validator_for

from pykafkad.rest_proxy import embedded_format, rest_errors
from pykafkad.rest_proxy.kafka_clients import CALLER
from pykafkad.schema_registry.protobuf_schema import parse as parse_proto
from pykafkad.schema_registry.record_decoders import protobuf_messages, reader_for
from pykafkad.schema_registry.registry_state import SchemaVersion

SCHEMA_TYPES = {"avro": "AVRO", "jsonschema": "JSON", "protobuf": "PROTOBUF"}
REGISTRY_TIMEOUT_S = 30.0
MAGIC = b"\x00"


def _registry_headers() -> dict[str, str]:
    headers = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
    # The caller's own credentials: a registry that asks for them judges the caller, not the proxy.
    authorization = CALLER.get().authorization
    if authorization:
        headers["Authorization"] = authorization
    return headers


class RegistryLink:
    """The schema registry's REST API, as the proxy uses it: register a schema, look one up by id."""

    def __init__(self, url: str | None) -> None:
        self.url = url.rstrip("/") if url else None
        self._by_id: dict[int, tuple[str, str]] = {}  # ids are never reused: cached for good

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        if self.url is None:
            raise rest_errors.payload("Schema Registry must be configured when using schemas "
                                      "(rest.schema.registry.url, or schema.registry.listener in the broker).")
        request = urllib.request.Request(self.url + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers=_registry_headers())
        try:
            with urllib.request.urlopen(request, timeout=REGISTRY_TIMEOUT_S) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as e:
            try:
                detail = json.loads(e.read()).get("message", "")
            except (ValueError, AttributeError):
                detail = ""
            if e.code in (409, 422):
                raise rest_errors.invalid_schema(detail or f"the registry answered {e.code}") from None
            raise rest_errors.serialization(f"the schema registry answered {e.code}: {detail}") from None
        except OSError as e:
            raise rest_errors.serialization(f"cannot reach the schema registry at {self.url}: {e}") from None

    def register(self, subject: str, schema_type: str, schema: str) -> int:
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        answer = self._call("POST", f"/subjects/{urllib.parse.quote(subject, safe='')}/versions", body)
        self._by_id.setdefault(int(answer["id"]), (schema_type, schema))
        return int(answer["id"])

    def version(self, subject: str, version: str | int) -> tuple[int, int, str, str]:
        """The id, version number, type and text of ``subject``'s version (``latest`` too)."""
        answer = self._call("GET", f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/{version}")
        schema_type = answer.get("schemaType", "AVRO")
        self._by_id.setdefault(int(answer["id"]), (schema_type, answer["schema"]))
        return int(answer["id"]), int(answer["version"]), schema_type, answer["schema"]

    def lookup(self, subject: str, schema_type: str, schema: str) -> int:
        """The version number ``schema`` has under ``subject``."""
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        return int(self._call("POST", f"/subjects/{urllib.parse.quote(subject, safe='')}", body)["version"])

    def schema(self, schema_id: int) -> tuple[str, str]:
        """The type and text of the schema ``schema_id`` names."""
        found = self._by_id.get(schema_id)
        if found is None:
            answer = self._call("GET", f"/schemas/ids/{schema_id}")
            found = self._by_id[schema_id] = (answer.get("schemaType", "AVRO"), answer["schema"])
        return found


@functools.lru_cache(maxsize=256)
def writer_for(schema_type: str, schema: str) -> Any:
    """datum (as JSON) -> encoded bytes, for one schema; ValueError saying what does not fit."""
    if schema_type == "AVRO":
        parsed = fastavro.parse_schema(json.loads(schema))

        def avro(datum: Any) -> bytes:
            try:
                [record] = list(fastavro.json_reader(io.StringIO(json.dumps(datum)), parsed))
                out = io.BytesIO()
                fastavro.schemaless_writer(out, parsed, record)
            except (ValueError, TypeError, KeyError, AttributeError, StopIteration) as e:
                raise ValueError(f"does not fit its Avro schema ({e})") from None
            return out.getvalue()
        return avro
    if schema_type == "JSON":
        document = json.loads(schema)
        validator = validator_for(document, default=Draft7Validator)(document)

        def jsonschema(datum: Any) -> bytes:
            try:
                validator.validate(datum)
            except ValidationError as e:
                raise ValueError(f"does not fit its JSON schema ({e.message})") from None
            return json.dumps(datum, separators=(",", ":"), ensure_ascii=False).encode()
        return jsonschema
    parsed = parse_proto(schema)
    messages = protobuf_messages(parsed.parsed, parsed.imports)
    if isinstance(messages, str) or not messages:
        raise ValueError(messages or "the Protobuf schema has no message")
    message_class = message_factory.GetMessageClass(messages[0])

    def protobuf(datum: Any) -> bytes:
        try:
            # Message indexes [0] (the first message) are written as one 0 byte.
            return b"\x00" + json_format.ParseDict(datum, message_class()).SerializeToString()
        except (json_format.ParseError, EncodeError, TypeError) as e:
            raise ValueError(f"does not fit its Protobuf schema ({e})") from None
    return protobuf


@functools.lru_cache(maxsize=256)
def _avro_json(schema: str) -> Any:
    parsed = fastavro.parse_schema(json.loads(schema))

    def read(payload: bytes) -> Any:
        datum = fastavro.schemaless_reader(io.BytesIO(payload[5:]), parsed, None)
        out = io.StringIO()
        fastavro.json_writer(out, parsed, [datum])
        return json.loads(out.getvalue())
    return read


class RecordEncoder:
    """The keys and values of one produce request, in its format."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.key_schema_id: int | None = None
        self.value_schema_id: int | None = None
        self._writers: dict[str, tuple[int, Any]] = {}

    def key(self, index: int, data: Any) -> bytes | None:
        return self._encode("key", index, data)

    def value(self, index: int, data: Any) -> bytes | None:
        return self._encode("value", index, data)

    def _encode(self, field: str, index: int, data: Any) -> bytes | None:
        if self.fmt not in SCHEMA_TYPES:
            return embedded_format.encode_plain(self.fmt, field, index, data)
        if data is None:
            return None
        if field not in self._writers:
            raise rest_errors.key_schema_missing() if field == "key" else rest_errors.value_schema_missing()
        schema_id, write = self._writers[field]
        try:
            return MAGIC + struct.pack(">i", schema_id) + write(data)
        except ValueError as e:
            raise rest_errors.bad_data(f"records[{index}].{field} {e}") from None


class RecordDecoder:
    """Keys and values read by a consumer instance, in its format."""

    def __init__(self, fmt: str, link: RegistryLink) -> None:
        self.fmt = fmt
        self.link = link

    async def key(self, data: bytes | None) -> Any:
        return await self._decode(data)

    async def value(self, data: bytes | None) -> Any:
        return await self._decode(data)

    async def _decode(self, data: bytes | None) -> Any:
        if self.fmt not in SCHEMA_TYPES:
            return embedded_format.decode_plain(self.fmt, data)
        if data is None:
            return None
        if len(data) < 5 or data[:1] != MAGIC:
            raise rest_errors.deserialization(f"a record is not in the schema registry's wire format, as this "
                                              f"{self.fmt} consumer instance needs; read it with a binary one")
        schema_id = struct.unpack(">i", data[1:5])[0]
        schema_type, schema = await trio.to_thread.run_sync(self.link.schema, schema_id)
        try:
            if schema_type == "AVRO":
                return _avro_json(schema)(data)
            return reader_for(SchemaVersion("", 0, schema_id, schema, schema_type))(data)
        except (ValueError, EOFError, KeyError, IndexError, TypeError) as e:
            raise rest_errors.deserialization(f"a record does not decode with schema {schema_id}: {e}") from None


class SchemaFormats:
    def __init__(self, registry_url: str | None) -> None:
        self.link = RegistryLink(registry_url)

    def decoder(self, fmt: str) -> RecordDecoder:
        return RecordDecoder(fmt, self.link)

    async def encoder(self, fmt: str, topic: str, body: dict[str, Any]) -> RecordEncoder:
        """The encoder of one produce request: for a schema format, its key and value schemas
        registered (or looked up by id) first."""
        encoder = RecordEncoder(fmt)
        if fmt not in SCHEMA_TYPES:
            return encoder
        for field in ("key", "value"):
            schema, schema_id = body.get(f"{field}_schema"), body.get(f"{field}_schema_id")
            if schema is None and schema_id is None:
                continue
            if schema is not None and schema_id is not None:
                raise rest_errors.bad_request(f"give {field}_schema or {field}_schema_id, not both")
            if schema is not None:
                if not isinstance(schema, str):
                    schema = json.dumps(schema)  # a schema given as JSON rather than as its text
                schema_id = await trio.to_thread.run_sync(self.link.register, f"{topic}-{field}",
                                                          SCHEMA_TYPES[fmt], schema)
            elif not isinstance(schema_id, int) or isinstance(schema_id, bool):
                raise rest_errors.unprocessable(f"{field}_schema_id must be an integer")
            schema_type, text = await trio.to_thread.run_sync(self.link.schema, schema_id)
            if schema_type != SCHEMA_TYPES[fmt]:
                raise rest_errors.invalid_schema(f"schema {schema_id} is {schema_type}, not {SCHEMA_TYPES[fmt]}")
            try:
                write = await trio.to_thread.run_sync(writer_for, schema_type, text)
            except (ValueError, KeyError, TypeError) as e:
                raise rest_errors.invalid_schema(str(e)) from None
            encoder._writers[field] = (schema_id, write)
            setattr(encoder, f"{field}_schema_id", schema_id)
        return encoder
