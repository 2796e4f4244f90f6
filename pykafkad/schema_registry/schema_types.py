"""The schema types the registry serves, each with its parser and its compatibility check, behind
one interface: a parsed schema has ``text`` (what is stored and answered), ``parsed`` and
``schema_type``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pykafkad.schema_registry import (
    avro_compatibility,
    avro_schema,
    json_compatibility,
    json_schema,
    protobuf_compatibility,
    protobuf_schema,
)
from pykafkad.schema_registry.avro_schema import AvroSchema
from pykafkad.schema_registry.errors import RegistryError, invalid_schema, unprocessable
from pykafkad.schema_registry.json_schema import JsonSchema
from pykafkad.schema_registry.protobuf_schema import ProtobufSchema

ParsedSchema = AvroSchema | JsonSchema | ProtobufSchema
# A schema's references, resolved: (name, schema type, schema text, its own references resolved),
# hashable so that parses stay cached (``registry_state.RegistryState.dependencies`` makes them).
Dependencies = tuple[tuple[str, str, str, "Dependencies"], ...]
_PARSERS: dict[str, Callable[[str, bool, Dependencies], ParsedSchema]] = {
    "AVRO": avro_schema.parse, "JSON": json_schema.parse, "PROTOBUF": protobuf_schema.parse}
_READERS: dict[str, Callable[[Any, Any], list[str]]] = {
    "AVRO": lambda reader, writer: avro_compatibility.reader_problems(reader.parsed, writer.parsed),
    "JSON": lambda reader, writer: json_compatibility.reader_problems(
        json_compatibility.with_references(reader.parsed, reader.resources),
        json_compatibility.with_references(writer.parsed, writer.resources)),
    "PROTOBUF": lambda reader, writer: protobuf_compatibility.reader_problems(reader.parsed, writer.parsed)}
SCHEMA_TYPES = tuple(_PARSERS)


def parse(text: str, schema_type: str, normalize: bool = False, deps: Dependencies = ()) -> ParsedSchema:
    """The schema ``text`` holds, with the schemas its references name (``deps``) known to it."""
    parser = _PARSERS.get(schema_type)
    if parser is None:
        raise unprocessable(f"Invalid schema type {schema_type}: this registry serves {', '.join(SCHEMA_TYPES)} "
                            "so far")
    for name, dep_type, _, _ in deps:
        if dep_type != schema_type:
            raise invalid_schema(f"reference {name} is a {dep_type} schema; a {schema_type} schema references "
                                 f"{schema_type} schemas only")
    return parser(text, normalize, deps)


@functools.lru_cache(maxsize=1024)
def parse_stored(text: str, schema_type: str, deps: Dependencies = ()) -> ParsedSchema | None:
    """A schema read back from the topic, parsed again for a check (kept: a Protobuf parse runs
    protoc); None if it no longer parses."""
    try:
        return parse(text, schema_type, False, deps)
    except RegistryError:
        return None


def reader_problems(reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
    """Why ``reader`` cannot take what ``writer`` wrote (empty: it can)."""
    if reader.schema_type != writer.schema_type:
        return [f"{{errorType:'TYPE_CHANGED', description:'the schema type changed from {writer.schema_type} to "
                f"{reader.schema_type}', path:'/'}}"]
    return _READERS[reader.schema_type](reader, writer)
