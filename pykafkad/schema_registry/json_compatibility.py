"""JSON Schema compatibility: whether every document a writer's schema accepts is accepted by a
reader's schema, answered as the reasons it may not be, in Confluent's error types.

The check is structural and errs on the side of refusing: a change it cannot prove safe is a
reason.  What it knows:

* ``type`` (``integer`` is a ``number``): the reader must take every type the writer does
  (TYPE_NARROWED, TYPE_CHANGED);
* objects, by content model: a property the reader adds must be one the writer could not have
  written with another shape, that is the writer's model is closed (``additionalProperties:
  false``) or its additional properties fit the new one (PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL); a
  property the reader drops must fit the reader's additional properties
  (PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL); the reader may not require more
  (REQUIRED_ATTRIBUTE_ADDED) nor close an open model (ADDITIONAL_PROPERTIES_REMOVED);
* arrays (``items``), enums (ENUM_ARRAY_NARROWED), ``const``, the length, size and range bounds
  (MAX_LENGTH_DECREASED, MIN_LENGTH_INCREASED, MAXIMUM_DECREASED, ... and their _ADDED forms),
  ``pattern`` (PATTERN_ADDED, PATTERN_CHANGED);
* ``anyOf``/``oneOf``: each writer branch must fit a reader branch (COMBINED_TYPE_SUBSCHEMAS_CHANGED);
* ``$ref``, followed on both sides: local ones (``#/definitions/...``, ``#/$defs/...``) and those
  naming a referenced schema by its reference name (``address.json``, ``address.json#/$defs/x``),
  which are embedded in the document first (``with_references``).

Any other keyword that differs between the two (``not``, ``if``, ``allOf``, ``dependencies``...)
is reported as changed.
"""

from __future__ import annotations

from typing import Any

_NUMERIC = {"integer", "number"}
# Bounds: (keyword, reader may not be below the writer's (True) or above it (False), the error type).
_LOWER_BOUNDS = {"minLength": "MIN_LENGTH", "minItems": "MIN_ITEMS", "minProperties": "MIN_PROPERTIES",
                 "minimum": "MINIMUM", "exclusiveMinimum": "EXCLUSIVE_MINIMUM"}
_UPPER_BOUNDS = {"maxLength": "MAX_LENGTH", "maxItems": "MAX_ITEMS", "maxProperties": "MAX_PROPERTIES",
                 "maximum": "MAXIMUM", "exclusiveMaximum": "EXCLUSIVE_MAXIMUM"}
# Where the referenced schemas are embedded for the check (a name no JSON Schema keyword has).
_EMBEDDED = "$pykafkad-references"
# Keywords whose values are data, not schemas: a "$ref" key inside them is not a reference.
_DATA_KEYWORDS = {"enum", "const", "default", "examples"}
_HANDLED = {_EMBEDDED, "type", "properties", "required", "additionalProperties", "items", "enum", "const", "pattern",
            "anyOf", "oneOf", "$ref", "$schema", "$id", "id", "title", "description", "default", "examples",
            "definitions", "$defs", "format", "$comment", "readOnly", "writeOnly", "deprecated",
            *_LOWER_BOUNDS, *_UPPER_BOUNDS}


def _types(schema: dict[str, Any]) -> set[str] | None:
    """The JSON types the schema allows, None for any."""
    found = schema.get("type")
    if found is None:
        return None
    return {found} if isinstance(found, str) else set(found)


class _Check:
    def __init__(self, reader_root: Any, writer_root: Any) -> None:
        self.roots = {"reader": reader_root, "writer": writer_root}
        self.reasons: list[str] = []
        self._seen: set[tuple[int, int]] = set()

    def _resolve(self, schema: Any, side: str) -> Any:
        for _ in range(32):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)
                    and schema["$ref"].startswith("#")):
                return schema
            node: Any = self.roots[side]
            for part in schema["$ref"].lstrip("#").strip("/").split("/"):
                if not part:
                    continue
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(node, dict) or part not in node:
                    return {}
                node = node[part]
            schema = node
        return schema

    def fail(self, kind: str, path: str, description: str) -> None:
        self.reasons.append(f"{{errorType:'{kind}', description:'{description}', path:'{path or '#/'}'}}")

    def quiet(self, reader: Any, writer: Any) -> bool:
        saved = self.reasons
        self.reasons = []
        try:
            return self.check(reader, writer, "#")
        finally:
            self.reasons = saved

    def check(self, reader: Any, writer: Any, path: str) -> bool:
        reader, writer = self._resolve(reader, "reader"), self._resolve(writer, "writer")
        if reader is True or reader == {}:
            return True
        if writer is False:
            return True
        if reader is False:
            self.fail("SCHEMA_NARROWED", path, "the new schema accepts nothing")
            return False
        if writer is True:
            writer = {}
        key = (id(reader), id(writer))
        if key in self._seen:
            return True
        self._seen.add(key)
        try:
            before = len(self.reasons)
            self._combined(reader, writer, path)
            self._types(reader, writer, path)
            self._values(reader, writer, path)
            self._bounds(reader, writer, path)
            if "object" in (_types(writer) or {"object"}) and "object" in (_types(reader) or {"object"}):
                self._objects(reader, writer, path)
            if "items" in reader or "items" in writer:
                self.check(reader.get("items", True), writer.get("items", True), f"{path}/items")
            for keyword in sorted((set(reader) | set(writer)) - _HANDLED):
                if reader.get(keyword) != writer.get(keyword):
                    self.fail(f"{keyword.upper()}_CHANGED", f"{path}/{keyword}", f"{keyword} changed")
            return len(self.reasons) == before
        finally:
            self._seen.discard(key)

    def _combined(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> None:
        for keyword in ("anyOf", "oneOf"):
            if keyword not in reader and keyword not in writer:
                continue
            readers = reader.get(keyword, [{k: v for k, v in reader.items() if k != keyword}])
            writers = writer.get(keyword, [{k: v for k, v in writer.items() if k != keyword}])
            for i, branch in enumerate(writers):
                if not any(self.quiet(r, branch) for r in readers):
                    self.fail("COMBINED_TYPE_SUBSCHEMAS_CHANGED", f"{path}/{keyword}/{i}",
                              f"no {keyword} branch of the new schema takes branch {i} of the old one")

    def _types(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> None:
        read, written = _types(reader), _types(writer)
        if read is None:
            return
        if written is None:
            self.fail("TYPE_NARROWED", f"{path}/type", f"the new schema takes only {sorted(read)}")
            return
        allowed = read | ({"integer"} if "number" in read else set())
        missing = written - allowed
        if missing:
            kind = "TYPE_NARROWED" if read & written else "TYPE_CHANGED"
            self.fail(kind, f"{path}/type", f"the new schema does not take {sorted(missing)}")

    def _values(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> None:
        if "enum" in reader:
            old = writer.get("enum", [writer["const"]] if "const" in writer else None)
            if old is None or any(v not in reader["enum"] for v in old):
                self.fail("ENUM_ARRAY_NARROWED", f"{path}/enum", "the new enum lacks values the old schema takes")
        if "const" in reader and writer.get("const", object()) != reader["const"] and \
                writer.get("enum") != [reader["const"]]:
            self.fail("CONST_CHANGED", f"{path}/const", "the new const is not what the old schema takes")
        if "pattern" in reader and reader["pattern"] != writer.get("pattern"):
            kind = "PATTERN_CHANGED" if "pattern" in writer else "PATTERN_ADDED"
            self.fail(kind, f"{path}/pattern", "the new pattern may refuse what the old schema takes")

    def _bounds(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> None:
        for keyword, name in _LOWER_BOUNDS.items():
            if isinstance(reader.get(keyword), int | float) and not isinstance(reader.get(keyword), bool):
                if keyword not in writer:
                    self.fail(f"{name}_ADDED", f"{path}/{keyword}", f"{keyword} added")
                elif reader[keyword] > writer[keyword]:
                    self.fail(f"{name}_INCREASED", f"{path}/{keyword}", f"{keyword} increased")
        for keyword, name in _UPPER_BOUNDS.items():
            if isinstance(reader.get(keyword), int | float) and not isinstance(reader.get(keyword), bool):
                if keyword not in writer:
                    self.fail(f"{name}_ADDED", f"{path}/{keyword}", f"{keyword} added")
                elif reader[keyword] < writer[keyword]:
                    self.fail(f"{name}_DECREASED", f"{path}/{keyword}", f"{keyword} decreased")

    def _objects(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> None:
        read_props, write_props = reader.get("properties", {}), writer.get("properties", {})
        read_extra, write_extra = reader.get("additionalProperties", True), writer.get("additionalProperties", True)
        for name, schema in read_props.items():
            where = f"{path}/properties/{name}"
            if name in write_props:
                self.check(schema, write_props[name], where)
            elif write_extra is False:
                continue
            elif write_extra is True or write_extra == {}:
                if not (schema is True or schema == {}):
                    self.fail("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where,
                              f"the old schema let '{name}' hold anything")
            elif not self.quiet(schema, write_extra):
                self.fail("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where,
                          f"'{name}' does not take what the old additionalProperties did")
        for name, schema in write_props.items():
            if name in read_props:
                continue
            where = f"{path}/properties/{name}"
            if read_extra is False:
                self.fail("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where,
                          f"'{name}' was removed from a closed content model")
            elif not (read_extra is True or read_extra == {}) and not self.quiet(read_extra, schema):
                self.fail("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where,
                          f"the new additionalProperties do not take the removed '{name}'")
        added = sorted(set(reader.get("required", [])) - set(writer.get("required", [])))
        for name in added:
            self.fail("REQUIRED_ATTRIBUTE_ADDED", f"{path}/required", f"'{name}' is now required")
        if read_extra is False and write_extra is not False:
            self.fail("ADDITIONAL_PROPERTIES_REMOVED", f"{path}/additionalProperties",
                      "the new schema closes the content model")
        elif isinstance(read_extra, dict) and read_extra != {} and write_extra is not False:
            self.check(read_extra, True if write_extra is True else write_extra, f"{path}/additionalProperties")


def _pointer_part(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _rebased(node: Any, base: str, names: frozenset[str]) -> Any:
    """``node`` with each ``$ref`` made local to the document it is embedded in: a local one
    prefixed with ``base`` (where its document now sits), one naming a referenced schema pointed
    at that schema's embedded copy."""
    if isinstance(node, list):
        return [_rebased(item, base, names) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            target, _, fragment = value.partition("#")
            if not target:
                value = base + fragment if base != "#" else value
            elif target in names:
                value = f"#/{_pointer_part(_EMBEDDED)}/{_pointer_part(target)}{fragment}"
            out[key] = value
        elif key in _DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = _rebased(value, base, names)
    return out


def with_references(document: Any, resources: tuple[tuple[str, Any], ...]) -> Any:
    """``document`` with the schemas its references name (``resources``: (reference name,
    document)) embedded, and every ``$ref`` local, so that the check follows them as it follows
    its own definitions."""
    if not resources or not isinstance(document, dict):
        return document
    names = frozenset(name for name, _ in resources)
    embedded = {name: _rebased(doc, f"#/{_pointer_part(_EMBEDDED)}/{_pointer_part(name)}", names)
                for name, doc in resources}
    return {**_rebased(document, "#", names), _EMBEDDED: embedded}


def reader_problems(reader: Any, writer: Any) -> list[str]:
    """Why documents valid under ``writer`` may be refused by ``reader`` (empty: they are not);
    referenced schemas are followed once embedded with ``with_references``."""
    check = _Check(reader, writer)
    check.check(reader, writer, "#")
    return check.reasons
