"""JSON Schemas as the registry holds them: checked against their draft's meta-schema by the
``jsonschema`` library (draft 4 to 2020-12, chosen by ``$schema``, draft 7 without one).

Two registrations are the same schema when their JSON is the same once whitespace is gone; with
``normalize`` the keys are also sorted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft7Validator, validator_for

from pykafkad.schema_registry.errors import invalid_schema


@dataclass(frozen=True)
class JsonSchema:
    """A checked JSON Schema: ``text`` is what is stored and answered, ``parsed`` the document."""

    text: str
    parsed: Any
    # The referenced schemas, by the names ``$ref`` uses for them: (name, document).
    resources: tuple[tuple[str, Any], ...] = ()

    @property
    def schema_type(self) -> str:
        return "JSON"


def parse(text: str, normalize: bool = False, deps: Any = ()) -> JsonSchema:
    """The schema ``text`` holds, or 42201 saying what is wrong with it."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, TypeError) as e:
        raise invalid_schema(f"not JSON: {e}") from None
    if not isinstance(raw, dict | bool):
        raise invalid_schema("a JSON Schema is an object or a boolean")
    try:
        validator_for(raw, default=Draft7Validator).check_schema(raw)
    except SchemaError as e:
        where = "/".join(str(p) for p in e.path) or "the top level"
        raise invalid_schema(f"at {where}: {e.message}") from None
    resources = []
    for name, _, dep_text, _ in _flatten(deps):
        try:
            resources.append((name, json.loads(dep_text)))
        except json.JSONDecodeError as e:
            raise invalid_schema(f"reference {name} is not JSON: {e}") from None
    return JsonSchema(json.dumps(raw, separators=(",", ":"), ensure_ascii=False, sort_keys=normalize), raw,
                      tuple(resources))


def _flatten(deps: Any) -> list[Any]:
    """Every referenced schema, those they reference first."""
    found = []
    for dep in deps:
        found += _flatten(dep[3])
        found.append(dep)
    return found
