"""The compatibility matrix for Avro: pairs of schemas (old, new) with the verdict each level gives in
Confluent's documentation ("Schema Evolution and Compatibility": which changes each level allows),
and the transitive levels against a history of three versions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pykafkad.schema_registry.avro_schema import parse
from pykafkad.schema_registry.compatibility import problems
from pykafkad.schema_registry.errors import RegistryError
from pykafkad.tests.compatibility_matrix import assert_verdicts


def record(*fields: dict[str, Any], name: str = "R", **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": "ex", "fields": list(fields), **extra}


A = {"name": "a", "type": "string"}
B_DEFAULT = {"name": "b", "type": "int", "default": 0}
B_REQUIRED = {"name": "b", "type": "int"}
COLOR = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}
COLOR_MORE = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}

# (change, old, new, {level: compatible})
MATRIX: list[tuple[str, Any, Any, dict[str, bool]]] = [
    ("add a field with a default", record(A), record(A, B_DEFAULT),
     {"BACKWARD": True, "FORWARD": True, "FULL": True, "NONE": True}),
    ("add a field without a default", record(A), record(A, B_REQUIRED),
     {"BACKWARD": False, "FORWARD": True, "FULL": False, "NONE": True}),
    ("delete a field with a default", record(A, B_DEFAULT), record(A),
     {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("delete a field without a default", record(A, B_REQUIRED), record(A),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("widen int to long", record({"name": "n", "type": "int"}), record({"name": "n", "type": "long"}),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("narrow long to int", record({"name": "n", "type": "long"}), record({"name": "n", "type": "int"}),
     {"BACKWARD": False, "FORWARD": True}),
    ("string to bytes", record({"name": "s", "type": "string"}), record({"name": "s", "type": "bytes"}),
     {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("change a type", record({"name": "n", "type": "int"}), record({"name": "n", "type": "string"}),
     {"BACKWARD": False, "FORWARD": False, "FULL": False, "NONE": True}),
    ("add an enum symbol", record({"name": "c", "type": COLOR}), record({"name": "c", "type": COLOR_MORE}),
     {"BACKWARD": True, "FORWARD": False}),
    ("add an enum symbol, old enum with a default", record({"name": "c", "type": {**COLOR, "default": "RED"}}),
     record({"name": "c", "type": {**COLOR_MORE, "default": "RED"}}), {"BACKWARD": True, "FORWARD": True}),
    ("add a union branch", record({"name": "u", "type": ["null", "string"]}),
     record({"name": "u", "type": ["null", "string", "int"]}), {"BACKWARD": True, "FORWARD": False}),
    ("make a field optional", record({"name": "u", "type": "string"}),
     record({"name": "u", "type": ["null", "string"]}), {"BACKWARD": True, "FORWARD": False}),
    ("rename the record", record(A, name="R"), record(A, name="S"),
     {"BACKWARD": False, "FORWARD": False}),
    ("rename the record, with an alias", record(A, name="R"), record(A, name="S", aliases=["R"]),
     {"BACKWARD": True}),
    ("rename a field, with an alias", record(A), record({"name": "a2", "type": "string", "aliases": ["a"]}),
     {"BACKWARD": True}),
    ("change a fixed size", {"type": "fixed", "name": "F", "size": 4}, {"type": "fixed", "name": "F", "size": 8},
     {"BACKWARD": False, "FORWARD": False}),
    ("array items widened", {"type": "array", "items": "int"}, {"type": "array", "items": "long"},
     {"BACKWARD": True, "FORWARD": False}),
    ("map values changed", {"type": "map", "values": "int"}, {"type": "map", "values": "string"},
     {"BACKWARD": False, "FORWARD": False}),
    ("a recursive record, a field added with a default",
     record({"name": "next", "type": ["null", "ex.R"], "default": None}),
     record({"name": "next", "type": ["null", "ex.R"], "default": None}, B_DEFAULT), {"FULL": True}),
    ("a named type referenced twice", record({"name": "x", "type": COLOR}, {"name": "y", "type": "ex.Color"}),
     record({"name": "x", "type": COLOR_MORE}, {"name": "y", "type": "ex.Color"}),
     {"BACKWARD": True, "FORWARD": False}),
]


@pytest.mark.parametrize(("change", "old", "new", "verdicts"), MATRIX, ids=[m[0] for m in MATRIX])
def test_each_level_gives_confluents_verdict(change: str, old: Any, new: Any, verdicts: dict[str, bool]) -> None:
    assert_verdicts(change, parse(json.dumps(old)), parse(json.dumps(new)), verdicts)


def test_transitive_levels_check_every_version_and_the_others_only_the_latest() -> None:
    # Only the oldest version disagrees with the new one: c was a long, v2 dropped it, the new one
    # brings it back as a string with a default.  Against v2 alone that is fine.
    v1 = parse(json.dumps(record(A, {"name": "c", "type": "long"})))
    v2 = parse(json.dumps(record(A)))
    new = parse(json.dumps(record(A, {"name": "c", "type": "string", "default": "x"})))
    history = [(1, v1), (2, v2)]
    assert not problems("BACKWARD", new, history)
    assert problems("BACKWARD_TRANSITIVE", new, history)
    assert not problems("FULL", new, history)
    assert problems("FULL_TRANSITIVE", new, history)
    assert not problems("FORWARD", new, history)
    assert problems("FORWARD_TRANSITIVE", new, history)


def test_the_reasons_name_the_kind_and_the_version() -> None:
    found = problems("BACKWARD", parse(json.dumps(record(A, B_REQUIRED))), [(7, parse(json.dumps(record(A))))])
    assert any("READER_FIELD_MISSING_DEFAULT_VALUE" in r and "'b'" in r for r in found)
    assert "{oldSchemaVersion: 7}" in found


@pytest.mark.parametrize("text", [
    "not json", '{"type": "record", "name": "B"}', '{"type": "nope"}', '{"type": "enum", "name": "E"}',
    '{"type": "record", "name": "R", "fields": [{"name": "n", "type": "int", "default": "x"}]}', "[]x",
])
def test_a_malformed_schema_is_42201(text: str) -> None:
    with pytest.raises(RegistryError) as refused:
        parse(text)
    assert refused.value.error_code == 42201 and refused.value.status == 422


def test_normalize_makes_differently_written_equal_schemas_the_same() -> None:
    short = {"type": "record", "name": "R", "namespace": "ex", "fields": [{"name": "a", "type": "string"}]}
    full = {"type": "record", "name": "ex.R", "fields": [{"name": "a", "type": {"type": "string"}}]}
    assert parse(json.dumps(short)).text != parse(json.dumps(full)).text
    assert parse(json.dumps(short), normalize=True).text == parse(json.dumps(full), normalize=True).text
