"""``full`` validation of JSON Schema records: the compiled validator (fastjsonschema) only speeds
the check up; every verdict and message is jsonschema's, also where the two would differ (a
``format``, which jsonschema does not check, a 2020-12 keyword, a reference to another schema)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pykafkad.schema_registry.record_decoders import decoder_for
from pykafkad.schema_registry.registry_state import SchemaVersion

ORDER = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
         "properties": {"id": {"type": "integer"}, "mail": {"type": "string", "format": "email"}},
         "required": ["id"]}
PAIR_2020 = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array",
             "prefixItems": [{"type": "integer"}, {"type": "integer"}]}


def _check(schema: dict[str, Any], document: Any, schema_id: int) -> str | None:
    version = SchemaVersion("s-value", 1, schema_id, json.dumps(schema), "JSON")
    return decoder_for(version)(b"\x00" + schema_id.to_bytes(4, "big") + json.dumps(document).encode())


@pytest.mark.parametrize(("schema", "document", "problem"), [
    (ORDER, {"id": 1, "mail": "a@example.com"}, None),
    (ORDER, {"mail": "a@example.com"}, "not valid against its JSON Schema at the top level: 'id' is a required "
                                       "property"),
    (ORDER, {"id": "1"}, "not valid against its JSON Schema at id: '1' is not of type 'integer'"),
    # fastjsonschema checks formats, jsonschema (as Confluent's registry) does not: accepted.
    (ORDER, {"id": 1, "mail": "not an address"}, None),
    # 2020-12's prefixItems, which only jsonschema knows.
    (PAIR_2020, [1, "a"], "not valid against its JSON Schema at 1: 'a' is not of type 'integer'"),
    (PAIR_2020, [1, 2], None),
], ids=["valid", "required-missing", "wrong-type", "format-unchecked", "2020-12-refused", "2020-12-valid"])
def test_verdicts_and_words_are_jsonschemas(schema: dict[str, Any], document: Any, problem: str | None) -> None:
    assert _check(schema, document, 100 + len(json.dumps(schema))) == problem


def test_only_schemas_fastjsonschema_judges_alike_are_compiled() -> None:
    def compiled(schema: dict[str, Any], schema_id: int) -> bool:
        return decoder_for(SchemaVersion("s-value", 1, schema_id, json.dumps(schema), "JSON")).args[1] is not None

    assert compiled(ORDER, 1) and compiled({"type": "object"}, 2)  # no $schema: draft 7, as the registry reads it
    assert not compiled(PAIR_2020, 3)
    # A $ref that is not local would be fetched by fastjsonschema: left to jsonschema.
    assert not compiled({"properties": {"a": {"$ref": "http://example.com/a.json"}}}, 4)
    assert compiled({"properties": {"a": {"$ref": "#/definitions/a"}}, "definitions": {"a": {"type": "string"}}}, 5)
