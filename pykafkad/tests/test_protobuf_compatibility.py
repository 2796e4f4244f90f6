"""The compatibility matrix for Protobuf: pairs of .proto files (old, new) with the verdict each level
gives by Confluent's rules for Protobuf, compiled by the same protoc the registry runs.  As in
Confluent's registry, a proto2 required field added or removed is incompatible both ways."""

from __future__ import annotations

import base64

import pytest

from pykafkad.schema_registry.compatibility import problems
from pykafkad.schema_registry.errors import RegistryError
from pykafkad.schema_registry.protobuf_schema import parse
from pykafkad.tests.compatibility_matrix import assert_verdicts


def proto(body: str, package: str = "shop", syntax: str = "proto3") -> str:
    return f'syntax = "{syntax}";\npackage {package};\n{body}\n'


ORDER = "message Order { int32 id = 1; string item = 2; }"

MATRIX: list[tuple[str, str, str, dict[str, bool]]] = [
    ("add a field", proto(ORDER), proto("message Order { int32 id = 1; string item = 2; double price = 3; }"),
     {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("remove a field", proto(ORDER), proto("message Order { int32 id = 1; }"), {"FULL": True}),
    ("int32 to int64 (same wire type)", proto(ORDER), proto("message Order { int64 id = 1; string item = 2; }"),
     {"FULL": True}),
    ("int32 to string", proto(ORDER), proto("message Order { string id = 1; string item = 2; }"),
     {"BACKWARD": False, "FORWARD": False, "NONE": True}),
    ("a scalar becomes a message", proto(ORDER),
     proto("message Id { int32 v = 1; } message Order { Id id = 1; string item = 2; }"), {"BACKWARD": False}),
    ("a field's message type changes", proto("message A { int32 v = 1; } message B { int32 v = 1; } "
                                             "message Order { A x = 1; }"),
     proto("message A { int32 v = 1; } message B { int32 v = 1; } message Order { B x = 1; }"),
     {"BACKWARD": False}),
    ("remove a message", proto(ORDER + " message Note { string text = 1; }"), proto(ORDER),
     {"BACKWARD": False, "FORWARD": True}),
    ("add a message", proto(ORDER), proto(ORDER + " message Note { string text = 1; }"),
     {"BACKWARD": True, "FORWARD": False}),
    ("change the package", proto(ORDER), proto(ORDER, package="store"), {"BACKWARD": False, "FORWARD": False}),
    ("repeated to singular", proto("message Order { repeated int32 ids = 1; }"),
     proto("message Order { int32 ids = 1; }"), {"BACKWARD": False}),
    ("proto2: add a required field", proto("message Order { optional int32 id = 1; }", syntax="proto2"),
     proto("message Order { optional int32 id = 1; required string item = 2; }", syntax="proto2"),
     {"BACKWARD": False, "FORWARD": False}),
    ("one field moved into a new oneof", proto(ORDER),
     proto("message Order { oneof key { int32 id = 1; } string item = 2; }"), {"BACKWARD": True}),
    ("two fields moved into a new oneof", proto(ORDER), proto("message Order { oneof key { int32 id = 1; "
                                                              "string item = 2; } }"), {"BACKWARD": False}),
    ("add an enum value", proto("enum Size { SMALL = 0; } message Order { Size size = 1; }"),
     proto("enum Size { SMALL = 0; LARGE = 1; } message Order { Size size = 1; }"), {"FULL": True}),
    ("a well-known type imported", proto(ORDER),
     'syntax = "proto3";\npackage shop;\nimport "google/protobuf/timestamp.proto";\n'
     "message Order { int32 id = 1; string item = 2; google.protobuf.Timestamp at = 3; }\n", {"FULL": True}),
]


@pytest.mark.parametrize(("change", "old", "new", "verdicts"), MATRIX, ids=[m[0] for m in MATRIX])
def test_each_level_gives_confluents_verdict(change: str, old: str, new: str, verdicts: dict[str, bool]) -> None:
    assert_verdicts(change, parse(old), parse(new), verdicts)


def test_a_serialized_descriptor_is_the_same_file_as_its_source() -> None:
    source = parse(proto(ORDER))
    serialized = parse(source.serialized())
    assert serialized.parsed == source.parsed
    assert not problems("FULL", serialized, [(1, source)])


@pytest.mark.parametrize(("text", "says"), [
    (proto("message Order { int32 id = 1 }"), "schema.proto:3"),
    (proto("message Order { Missing m = 1; }"), "Missing"),
    ('syntax = "proto3";\nimport "other.proto";\nmessage A { int32 v = 1; }\n', "other.proto"),
    ("", "empty"),
])
def test_a_malformed_schema_is_42201_with_protocs_message(text: str, says: str) -> None:
    with pytest.raises(RegistryError) as refused:
        parse(text)
    assert refused.value.error_code == 42201 and says in refused.value.message, refused.value.message


def test_base64_that_is_not_a_descriptor_is_compiled_as_source_and_refused() -> None:
    with pytest.raises(RegistryError):
        parse(base64.standard_b64encode(b"not a descriptor").decode())
