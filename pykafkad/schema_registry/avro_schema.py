"""Avro schemas as the registry holds them: parsed and checked by fastavro (names, types, defaults),
with the string the registry stores and compares.

Two registrations are the same schema when their JSON is the same once whitespace is gone, as
Confluent compares Avro's canonical string; with ``normalize`` the names are also made full and
the redundant namespaces dropped, so differently written equal schemas match.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastavro.schema import SchemaParseException, UnknownType, parse_schema

from pykafkad.schema_registry.errors import invalid_schema


@dataclass(frozen=True)
class AvroSchema:
    """A checked Avro schema: ``text`` is what is stored and answered, ``parsed`` has full names."""

    text: str
    parsed: Any

    @property
    def schema_type(self) -> str:
        return "AVRO"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _named(deps: Any, named: dict[str, Any]) -> None:
    """The named types the referenced schemas define, theirs first (fastavro's ``named_schemas``)."""
    for name, _, text, inner in deps:
        _named(inner, named)
        try:
            parse_schema(json.loads(text), named_schemas=named, _write_hint=False)
        except (json.JSONDecodeError, SchemaParseException, UnknownType, ValueError, TypeError, KeyError) as e:
            raise invalid_schema(f"reference {name} does not parse: {e}") from None


def parse(text: str, normalize: bool = False, deps: Any = ()) -> AvroSchema:
    """The schema ``text`` holds, or 42201 saying what is wrong with it.  The named types of the
    schemas it references (``deps``) are known to it, and written out in full in ``parsed``."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, TypeError) as e:
        raise invalid_schema(f"not JSON: {e}") from None
    _check_records(raw)
    named: dict[str, Any] = {}
    _named(deps, named)
    try:
        parsed = parse_schema(raw, named_schemas=named, _write_hint=False, expand=bool(deps))
    except KeyError as e:
        raise invalid_schema(f"a type lacks its {e} attribute") from None
    except (SchemaParseException, UnknownType, ValueError, TypeError, AttributeError) as e:
        raise invalid_schema(f"{type(e).__name__}: {e}") from None
    return AvroSchema(_compact(_normal(parsed)) if normalize else _compact(raw), parsed)


def _normal(schema: Any) -> Any:
    """fastavro's full names, with ``{"type": "int"}`` written as ``"int"``."""
    if isinstance(schema, list):
        return [_normal(branch) for branch in schema]
    if isinstance(schema, dict):
        if set(schema) == {"type"}:
            return _normal(schema["type"])
        return {k: _normal(v) if k in ("type", "items", "values") else
                [{**f, "type": _normal(f["type"])} for f in v] if k == "fields" else v for k, v in schema.items()}
    return schema


def _check_records(schema: Any) -> None:
    """What fastavro lets pass and Avro refuses: a record without a list of fields."""
    if isinstance(schema, list):
        for branch in schema:
            _check_records(branch)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "error"):
            if not isinstance(schema.get("fields"), list):
                raise invalid_schema(f"record {schema.get('name')!r} has no fields list")
            for field in schema["fields"]:
                if isinstance(field, dict):
                    _check_records(field.get("type"))
        elif isinstance(schema.get("type"), dict | list):
            _check_records(schema["type"])
        for key in ("items", "values"):
            if key in schema:
                _check_records(schema[key])
