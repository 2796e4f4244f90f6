"""Decoding one record key or value against the schema its id names: for
``pykafkad.{key,value}.schema.validation=full``, what is wrong with it (words that follow "it
is"), or None if it conforms; for the console, the datum itself as JSON-ready data.

The payload is the registry's wire format: magic byte 0, the 4-byte schema id, then
* Avro: the binary encoding of one datum of the schema (fastavro), with no byte left over;
* JSON Schema: a JSON document that the schema validates (jsonschema); a draft 4, 6 or 7 schema
  with only local ``$ref``s is first checked by a validator fastjsonschema compiles to Python, and
  only a document it refuses is checked again by jsonschema, whose verdict and words count;
* Protobuf: the message indexes (a zigzag varint count, then that many zigzag varints; a lone 0
  is the first message), then the message, parsed by the protobuf runtime from the schema's
  descriptor.
Each decoder is built once per schema id (ids are never reused) and runs on a worker thread.
"""

from __future__ import annotations

import functools
import importlib
import io
import json
import struct
from collections.abc import Callable
from typing import Any

import fastjsonschema
from fastavro import schemaless_reader
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import DecodeError
from jsonschema.validators import Draft7Validator, validator_for
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from pykafkad.schema_registry.avro_schema import AvroSchema
from pykafkad.schema_registry.json_schema import JsonSchema
from pykafkad.schema_registry.registry_state import SchemaVersion
from pykafkad.schema_registry.schema_types import Dependencies, parse_stored

HEADER = 5  # magic byte and schema id
Decoder = Callable[[bytes], str | None]
# The datum of a framed payload; ValueError saying what is wrong with it (as a Decoder would).
Reader = Callable[[bytes], Any]
# What a malformed Avro datum makes fastavro raise.
_AVRO_ERRORS = (EOFError, ValueError, IndexError, KeyError, TypeError, UnicodeDecodeError, struct.error,
                OverflowError, MemoryError)


def decoder_for(version: SchemaVersion, deps: Dependencies = ()) -> Decoder:
    """The check of a framed payload against ``version``'s schema (``deps``: what its references name)."""
    return _decoder(version.id, version.schema_type, version.schema, deps)


@functools.lru_cache(maxsize=1024)
def _decoder(schema_id: int, schema_type: str, schema: str, deps: Dependencies) -> Decoder:
    parsed = parse_stored(schema, schema_type, deps)
    if parsed is None:
        return lambda _payload: f"not checkable: its schema (id {schema_id}) no longer parses"
    if isinstance(parsed, AvroSchema):
        return functools.partial(_avro, parsed.parsed)
    if isinstance(parsed, JsonSchema):
        # A $ref to a referenced schema is looked up by the reference's name.
        registry: Registry[Any] = Registry().with_resources(
            (name, Resource.from_contents(document, default_specification=DRAFT7))
            for name, document in parsed.resources)
        validator = validator_for(parsed.parsed, default=Draft7Validator)(parsed.parsed, registry=registry)
        return functools.partial(_json, validator, _compiled_json(parsed))
    return _protobuf(parsed.parsed, parsed.imports)


def reader_for(version: SchemaVersion, deps: Dependencies = ()) -> Reader:
    """The datum of a framed payload of ``version``'s schema, as data ``json.dumps`` takes
    (Avro bytes as text, Protobuf as its JSON mapping)."""
    return _reader(version.id, version.schema_type, version.schema, deps)


@functools.lru_cache(maxsize=256)
def _reader(schema_id: int, schema_type: str, schema: str, deps: Dependencies) -> Reader:
    parsed = parse_stored(schema, schema_type, deps)
    if parsed is None:
        def unreadable(_payload: bytes) -> Any:
            raise ValueError(f"not readable: its schema (id {schema_id}) no longer parses")
        return unreadable
    if isinstance(parsed, AvroSchema):
        return functools.partial(_read_avro, _decoder(schema_id, schema_type, schema, deps), parsed.parsed)
    if isinstance(parsed, JsonSchema):
        return _read_json
    messages = protobuf_messages(parsed.parsed, parsed.imports)

    def read(payload: bytes) -> Any:
        if isinstance(messages, str):
            raise ValueError(messages)
        message, at = _framed_message(messages, payload)
        try:
            datum = message_factory.GetMessageClass(message).FromString(payload[at:])
        except DecodeError as e:
            raise ValueError(f"not a {message.full_name} message ({e})") from None
        return json_format.MessageToDict(datum, preserving_proto_field_name=True)

    return read


def _read_avro(check: Decoder, schema: Any, payload: bytes) -> Any:
    problem = check(payload)
    if problem is not None:
        raise ValueError(problem)
    return _json_ready(schemaless_reader(io.BytesIO(payload[HEADER:]), schema, None))


def _json_ready(datum: Any) -> Any:
    if isinstance(datum, dict):
        return {str(k): _json_ready(v) for k, v in datum.items()}
    if isinstance(datum, (list, tuple)):
        return [_json_ready(v) for v in datum]
    if isinstance(datum, bytes):
        return datum.decode("latin-1")  # as Avro's JSON encoding writes bytes
    if datum is None or isinstance(datum, (str, int, float, bool)):
        return datum
    return str(datum)  # decimals, dates, times and uuids of logical types


def _read_json(payload: bytes) -> Any:
    try:
        return json.loads(payload[HEADER:])
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"not JSON ({e})") from None


def _avro(schema: Any, payload: bytes) -> str | None:
    body = io.BytesIO(payload)
    body.seek(HEADER)
    try:
        schemaless_reader(body, schema, None)
    except _AVRO_ERRORS as e:
        return f"not a datum of its Avro schema ({type(e).__name__}: {e})"
    left = len(payload) - body.tell()
    if left:
        return f"not a datum of its Avro schema ({left} byte(s) left over after the datum)"
    return None


def _compiled_json(parsed: JsonSchema) -> Callable[[Any], Any] | None:
    """fastjsonschema's validator of the schema, or None where it may not judge as jsonschema does:
    a draft other than 4, 6 or 7 (7 when none is declared, as the registry reads it), or a
    ``$ref`` that is not local (fastjsonschema would fetch it over the network)."""
    schema = parsed.parsed
    if parsed.resources or not isinstance(schema, dict) or not _local_refs_only(schema):
        return None
    declared = schema.get("$schema", "")
    if not isinstance(declared, str) or (declared and not any(d in declared for d in ("draft-04", "draft-06",
                                                                                        "draft-07"))):
        return None
    definition = schema if declared else {**schema, "$schema": "http://json-schema.org/draft-07/schema#"}
    try:
        return fastjsonschema.compile(definition, use_default=False)
    except Exception:  # noqa: BLE001 - anything it cannot compile is left to jsonschema
        return None


def _local_refs_only(node: Any) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is not None and not (isinstance(ref, str) and ref.startswith("#")):
            return False
        return all(_local_refs_only(v) for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
    if isinstance(node, list):
        return all(_local_refs_only(v) for v in node)
    return True


def _json(validator: Any, compiled: Callable[[Any], Any] | None, payload: bytes) -> str | None:
    try:
        document = json.loads(payload[HEADER:])
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        return f"not JSON ({e})"
    if compiled is not None:
        try:
            compiled(document)
            return None
        except fastjsonschema.JsonSchemaValueException:
            pass  # jsonschema says what is wrong, or that nothing is (a format it does not check)
    error = next(iter(validator.iter_errors(document)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    return f"not valid against its JSON Schema at {where}: {error.message}"


def _varint(payload: bytes, at: int) -> tuple[int, int]:
    """A zigzag varint at ``at``: its value and the offset after it; ValueError if malformed."""
    shift = result = 0
    while True:
        if at >= len(payload) or shift > 63:
            raise ValueError("not in the Protobuf wire format (truncated message indexes)")
        byte = payload[at]
        at += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), at


def _well_known(name: str) -> descriptor_pb2.FileDescriptorProto:
    """One of Google's well-known types (``google/protobuf/timestamp.proto``), from the protobuf
    runtime's own modules (importing one puts its file in the default pool)."""
    importlib.import_module(name.removesuffix(".proto").replace("/", ".") + "_pb2")
    known = descriptor_pb2.FileDescriptorProto()
    descriptor_pool.Default().FindFileByName(name).CopyToProto(known)
    return known


def protobuf_messages(file: descriptor_pb2.FileDescriptorProto,
                       imports: tuple[descriptor_pb2.FileDescriptorProto, ...]) -> list[Descriptor] | str:
    """The top-level messages of ``file``, loaded with what it imports; or why they cannot be."""
    pool = descriptor_pool.DescriptorPool()
    try:
        given = {f.name for f in imports}
        # Google's well-known types any of the files import, then the referenced files, each after
        # what it imports, then the file itself.
        wanted = sorted({d for f in (*imports, file) for d in f.dependency if d not in given})
        for dependency in wanted:
            pool.Add(_well_known(dependency))
        for imported in imports:
            pool.Add(imported)
        pool.Add(file)
    except (ImportError, KeyError, TypeError) as e:
        return f"not checkable: its Protobuf schema cannot be loaded ({e})"
    top = pool.FindFileByName(file.name).message_types_by_name
    return [top[m.name] for m in file.message_type]


def _framed_message(messages: list[Descriptor], payload: bytes) -> tuple[Descriptor, int]:
    """The message a framed payload's message indexes name, and where its bytes start; ValueError
    saying what is wrong."""
    count, at = _varint(payload, HEADER)
    indexes = [0] if count == 0 else []
    for _ in range(count):
        index, at = _varint(payload, at)
        indexes.append(index)
    if not messages or not 0 <= indexes[0] < len(messages):
        raise ValueError(f"not a message of its Protobuf schema (message index {indexes[0]})")
    message = messages[indexes[0]]
    for index in indexes[1:]:
        if not 0 <= index < len(message.nested_types):
            raise ValueError(f"not a message of its Protobuf schema (no nested message {index} in "
                             f"{message.full_name})")
        message = message.nested_types[index]
    return message, at


def _protobuf(file: descriptor_pb2.FileDescriptorProto,
              imports: tuple[descriptor_pb2.FileDescriptorProto, ...]) -> Decoder:
    messages = protobuf_messages(file, imports)
    if isinstance(messages, str):
        return lambda _payload, problem=messages: problem

    def decode(payload: bytes) -> str | None:
        try:
            message, at = _framed_message(messages, payload)
        except ValueError as e:
            return str(e)
        try:
            message_factory.GetMessageClass(message).FromString(payload[at:])
        except DecodeError as e:
            return f"not a {message.full_name} message ({e})"
        return None

    return decode
