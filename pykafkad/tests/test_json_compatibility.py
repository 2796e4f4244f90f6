"""The compatibility matrix for JSON Schema: pairs of schemas (old, new) with the verdict each level
gives by Confluent's rules for JSON Schema (the content models: open, closed and partially open;
required properties; types; enums; bounds; combined types)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pykafkad.schema_registry.compatibility import problems
from pykafkad.schema_registry.errors import RegistryError
from pykafkad.schema_registry.json_schema import parse
from pykafkad.tests.compatibility_matrix import assert_verdicts


def obj(properties: dict[str, Any], extra: Any = None, required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if extra is not None:
        schema["additionalProperties"] = extra
    if required:
        schema["required"] = required
    return schema


NAME = {"name": {"type": "string"}}
NAME_AGE = {"name": {"type": "string"}, "age": {"type": "integer"}}
NAME_NICK = {"name": {"type": "string"}, "nick": {"type": "string"}}

MATRIX: list[tuple[str, Any, Any, dict[str, bool]]] = [
    ("open model: add a property", obj(NAME), obj(NAME_AGE), {"BACKWARD": False, "FORWARD": True, "NONE": True}),
    ("open model: remove a property", obj(NAME_AGE), obj(NAME), {"BACKWARD": True, "FORWARD": False}),
    ("closed model: add an optional property", obj(NAME, False), obj(NAME_AGE, False),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("closed model: remove a property", obj(NAME_AGE, False), obj(NAME, False), {"BACKWARD": False, "FORWARD": True}),
    ("closed model: add a required property", obj(NAME, False), obj(NAME_AGE, False, ["age"]),
     {"BACKWARD": False}),
    ("drop a required property", obj(NAME_AGE, False, ["age"]), obj(NAME_AGE, False), {"BACKWARD": True}),
    ("close an open model", obj(NAME), obj(NAME, False), {"BACKWARD": False, "FORWARD": True}),
    ("partially open: add a property it covers", obj(NAME, {"type": "string"}), obj(NAME_NICK, {"type": "string"}),
     {"BACKWARD": True}),
    ("partially open: add a property it does not cover", obj(NAME, {"type": "string"}),
     obj(NAME_AGE, {"type": "string"}), {"BACKWARD": False}),
    ("widen integer to number", {"type": "integer"}, {"type": "number"}, {"BACKWARD": True, "FORWARD": False}),
    ("change a type", {"type": "string"}, {"type": "integer"}, {"BACKWARD": False, "FORWARD": False, "NONE": True}),
    ("add a type to a list", {"type": "string"}, {"type": ["string", "null"]}, {"BACKWARD": True, "FORWARD": False}),
    ("extend an enum", {"enum": ["a", "b"]}, {"enum": ["a", "b", "c"]}, {"BACKWARD": True, "FORWARD": False}),
    ("decrease maxLength", {"type": "string", "maxLength": 10}, {"type": "string", "maxLength": 5},
     {"BACKWARD": False, "FORWARD": True}),
    ("add a minimum", {"type": "integer"}, {"type": "integer", "minimum": 0}, {"BACKWARD": False, "FORWARD": True}),
    ("add a pattern", {"type": "string"}, {"type": "string", "pattern": "^a"}, {"BACKWARD": False, "FORWARD": True}),
    ("add an anyOf branch", {"anyOf": [{"type": "string"}]}, {"anyOf": [{"type": "string"}, {"type": "integer"}]},
     {"BACKWARD": True, "FORWARD": False}),
    ("array items narrowed", {"type": "array", "items": {"type": "number"}},
     {"type": "array", "items": {"type": "integer"}}, {"BACKWARD": False, "FORWARD": True}),
    ("a nested property's type changed", obj({"inner": obj({"x": {"type": "integer"}}, False)}, False),
     obj({"inner": obj({"x": {"type": "string"}}, False)}, False), {"BACKWARD": False, "FORWARD": False}),
    ("through a $ref", {"definitions": {"N": {"type": "integer"}}, "$ref": "#/definitions/N"},
     {"definitions": {"N": {"type": "number"}}, "$ref": "#/definitions/N"}, {"BACKWARD": True, "FORWARD": False}),
    ("only a description changed", {"type": "string", "description": "a"}, {"type": "string", "description": "b"},
     {"FULL": True}),
]


@pytest.mark.parametrize(("change", "old", "new", "verdicts"), MATRIX, ids=[m[0] for m in MATRIX])
def test_each_level_gives_confluents_verdict(change: str, old: Any, new: Any, verdicts: dict[str, bool]) -> None:
    assert_verdicts(change, parse(json.dumps(old)), parse(json.dumps(new)), verdicts)


def test_the_reasons_use_confluents_error_types() -> None:
    found = problems("BACKWARD", parse(json.dumps(obj(NAME_AGE))), [(3, parse(json.dumps(obj(NAME))))])
    assert any("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL" in r and "#/properties/age" in r for r in found), found
    assert "{oldSchemaVersion: 3}" in found


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"type": "strung"}', '{"properties": 3}',
                                  '{"required": "name"}'])
def test_a_malformed_schema_is_42201(text: str) -> None:
    with pytest.raises(RegistryError) as refused:
        parse(text)
    assert refused.value.error_code == 42201


ADDRESS_V1 = {"type": "object", "properties": {"city": {"type": "string"}},
              "$defs": {"zip": {"type": "string", "maxLength": 10}}}
ADDRESS_V2 = {"type": "object", "properties": {"city": {"type": "integer"}},
              "$defs": {"zip": {"type": "string", "maxLength": 5}}}


def _with_address(schema: dict[str, Any], address: dict[str, Any]) -> Any:
    # Confluent's resolved reference: (name, schema type, schema text, its own references).
    return parse(json.dumps(schema), deps=(("address.json", "JSON", json.dumps(address), ()),))


@pytest.mark.parametrize(("ref", "kind", "path"), [
    ("address.json", "TYPE_CHANGED", "#/properties/address/properties/city/type"),
    ("address.json#/$defs/zip", "MAX_LENGTH_DECREASED", "#/properties/address/maxLength")])
def test_references_to_other_schemas_are_followed(ref: str, kind: str, path: str) -> None:
    """A change inside a referenced schema is a change of the schema that references it, also
    through a pointer into it; the same schema referenced on both sides is no change."""
    person = {"type": "object", "properties": {"address": {"$ref": ref}}}
    old, new = _with_address(person, ADDRESS_V1), _with_address(person, ADDRESS_V2)
    found = problems("BACKWARD", new, [(1, old)])
    assert any(f"errorType:'{kind}'" in r and f"path:'{path}'" in r for r in found), found
    assert problems("FULL", new, [(1, _with_address(person, ADDRESS_V2))]) == []
