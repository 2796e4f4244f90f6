"""Reading Kafka's JSON message definitions into :mod:`wire.schema` objects.

Owns the translation rules: comment stripping, version ranges, snake_case field names, resolution of
``commonStructs``, and conversion of the definitions' string defaults ("-1", "0x7fffffff", "null",
"false") into Python values of the field's type.  Descriptive text ("about") is dropped on purpose.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from wire.codegen.naming import api_base_name, snake_case
from wire.schema import (
    NEVER,
    PRIMITIVE_TYPES,
    TYPE_DEFAULT,
    ArrayOf,
    Field,
    FieldType,
    MessageSchema,
    Struct,
    Versions,
    type_default,
)

_LINE_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)
_INT_TYPES = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})


class DefinitionError(ValueError):
    """A message definition that this generator cannot translate."""


def load_definition(text: str) -> dict[str, Any]:
    """Parse one definition file: JSON with whole-line ``//`` comments."""
    return json.loads(_LINE_COMMENT.sub("", text))


@dataclass(frozen=True)
class ParsedMessage:
    """A translated definition plus the top-level attributes the registry needs."""

    kind: str  # "request", "response" or "header"
    api_key: int | None
    schema: MessageSchema
    listeners: tuple[str, ...]
    latest_version_unstable: bool

    @property
    def api_name(self) -> str:
        return api_base_name(self.schema.name)


def parse_message(doc: dict[str, Any]) -> ParsedMessage:
    """Translate one loaded definition into a :class:`ParsedMessage`."""
    common = {cs["name"]: cs for cs in doc.get("commonStructs", ())}
    fields = _parse_fields(doc.get("fields", ()), common, doc["name"])
    schema = MessageSchema(
        name=doc["name"],
        valid=Versions.parse(doc["validVersions"]),
        flexible=Versions.parse(doc.get("flexibleVersions", "none")),
        fields=fields,
    )
    return ParsedMessage(
        kind=doc["type"],
        api_key=doc.get("apiKey"),
        schema=schema,
        listeners=tuple(doc.get("listeners", ())),
        latest_version_unstable=bool(doc.get("latestVersionUnstable", False)),
    )


def _parse_fields(
    raw_fields: Any, common: dict[str, dict[str, Any]], where: str, resolving: tuple[str, ...] = ()
) -> tuple[Field, ...]:
    return tuple(_parse_field(raw, common, where, resolving) for raw in raw_fields)


def _parse_field(
    raw: dict[str, Any], common: dict[str, dict[str, Any]], where: str, resolving: tuple[str, ...]
) -> Field:
    json_type: str = raw["type"]
    ftype = _parse_type(raw, json_type, common, f"{where}.{raw['name']}", resolving)
    tag = raw.get("tag")
    tagged = Versions.parse(raw["taggedVersions"]) if "taggedVersions" in raw else NEVER
    if (tag is None) != tagged.empty:
        raise DefinitionError(f"{where}.{raw['name']}: tag and taggedVersions must come together")
    nullable = Versions.parse(raw.get("nullableVersions", "none"))
    flexible = Versions.parse(raw["flexibleVersions"]) if "flexibleVersions" in raw else None
    default = _parse_default(raw.get("default"), ftype, f"{where}.{raw['name']}")
    return Field(
        name=snake_case(raw["name"]),
        type=ftype,
        versions=Versions.parse(raw["versions"]),
        nullable=nullable,
        tag=tag,
        tagged=tagged,
        default=default,
        flexible=flexible,
    )


def _parse_type(
    raw: dict[str, Any],
    json_type: str,
    common: dict[str, dict[str, Any]],
    where: str,
    resolving: tuple[str, ...],
) -> FieldType:
    if json_type.startswith("[]"):
        item = json_type[2:]
        if item in PRIMITIVE_TYPES:
            return ArrayOf(item)
        return ArrayOf(_struct(raw, item, common, where, resolving))
    if json_type in PRIMITIVE_TYPES:
        return json_type
    return _struct(raw, json_type, common, where, resolving)


def _struct(
    raw: dict[str, Any], name: str, common: dict[str, dict[str, Any]], where: str, resolving: tuple[str, ...]
) -> Struct:
    if "fields" in raw:
        return Struct(name, _parse_fields(raw["fields"], common, where, resolving))
    if name not in common:
        raise DefinitionError(f"{where}: struct type {name!r} has no fields and is not a common struct")
    if name in resolving:
        raise DefinitionError(f"{where}: common struct {name!r} contains itself")
    return Struct(name, _parse_fields(common[name]["fields"], common, where, (*resolving, name)))


def _parse_default(text: Any, ftype: FieldType, where: str) -> Any:
    """The field's default as a Python value, or TYPE_DEFAULT when it equals the type's default."""
    if text is None:
        return TYPE_DEFAULT
    if not isinstance(text, str):
        text = json.dumps(text)
    value: Any
    if text == "null" and (ftype in ("string", "bytes", "records") or not isinstance(ftype, str)):
        value = None
    elif isinstance(ftype, str) and ftype in _INT_TYPES:
        value = int(text, 0)
    elif ftype == "bool":
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise DefinitionError(f"{where}: bad bool default {text!r}")
        value = lowered == "true"
    elif ftype == "float64":
        value = float(text)
    elif ftype == "string":
        value = text
    else:
        raise DefinitionError(f"{where}: cannot take default {text!r} for type {ftype!r}")
    if value is not None and value == type_default(ftype) and type(value) is type(type_default(ftype)):
        return TYPE_DEFAULT
    return value
