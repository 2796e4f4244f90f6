"""Avro schema resolution (the Avro specification's rules for a reader reading a writer's data),
answered as the list of reasons the reader cannot, each with the path where it fails.

This is what every compatibility level is made of: BACKWARD asks whether the new schema reads the
old one's data, FORWARD the reverse, FULL both.  The schemas are fastavro's parsed form, in which a
named type appears whole once and by its full name after that.
"""

from __future__ import annotations

from typing import Any

# A writer's type that a reader of another primitive type still reads (the spec's promotions).
_PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}
_NAMED = ("record", "error", "enum", "fixed")


def _collect_names(schema: Any, names: dict[str, Any]) -> None:
    if isinstance(schema, list):
        for branch in schema:
            _collect_names(branch, names)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in _NAMED:
            names[schema["name"]] = schema
        if kind in ("record", "error"):
            for field in schema.get("fields", []):
                _collect_names(field["type"], names)
        elif kind == "array":
            _collect_names(schema["items"], names)
        elif kind == "map":
            _collect_names(schema["values"], names)
        elif isinstance(kind, dict | list):
            _collect_names(kind, names)


class _Resolution:
    def __init__(self, reader: Any, writer: Any) -> None:
        self.reader_names: dict[str, Any] = {}
        self.writer_names: dict[str, Any] = {}
        _collect_names(reader, self.reader_names)
        _collect_names(writer, self.writer_names)
        self.reasons: list[str] = []
        # Record pairs already being compared: recursive types end there.
        self._seen: set[tuple[str, str]] = set()

    def _resolve(self, schema: Any, names: dict[str, Any]) -> Any:
        while isinstance(schema, str) and schema in names:
            schema = names[schema]
        while isinstance(schema, dict) and isinstance(schema.get("type"), dict | list) :
            schema = schema["type"]
        if isinstance(schema, dict) and schema.get("type") in names and schema["type"] not in _NAMED:
            schema = names[schema["type"]]
        return schema

    @staticmethod
    def _kind(schema: Any) -> str:
        if isinstance(schema, list):
            return "union"
        if isinstance(schema, dict):
            return str(schema["type"])
        return str(schema)

    def check(self, reader: Any, writer: Any, path: str) -> bool:
        reader = self._resolve(reader, self.reader_names)
        writer = self._resolve(writer, self.writer_names)
        rk, wk = self._kind(reader), self._kind(writer)
        if wk == "union":
            ok = True
            for i, branch in enumerate(writer):
                if not self._reads_branch(reader, branch, f"{path}/{i}"):
                    ok = False
            return ok
        if rk == "union":
            if any(self._quiet(branch, writer) for branch in reader):
                return True
            self._fail("MISSING_UNION_BRANCH", path, f"the reader's union has no branch for the writer's {wk}")
            return False
        if rk != wk:
            if wk in _PROMOTIONS and rk in _PROMOTIONS[wk]:
                return True
            self._fail("TYPE_MISMATCH", path, f"the reader's type {rk} does not match the writer's type {wk}")
            return False
        if rk in ("record", "error"):
            return self._records(reader, writer, path)
        if rk == "enum":
            return self._enums(reader, writer, path)
        if rk == "fixed":
            ok = self._names_match(reader, writer, path)
            if reader.get("size") != writer.get("size"):
                self._fail("FIXED_SIZE_MISMATCH", f"{path}/size",
                           f"expected size {writer.get('size')}, found {reader.get('size')}")
                ok = False
            return ok
        if rk == "array":
            return self.check(reader["items"], writer["items"], f"{path}/items")
        if rk == "map":
            return self.check(reader["values"], writer["values"], f"{path}/values")
        return True

    def _reads_branch(self, reader: Any, branch: Any, path: str) -> bool:
        if self._kind(self._resolve(reader, self.reader_names)) == "union":
            if any(self._quiet(r, branch) for r in reader):
                return True
            kind = self._kind(self._resolve(branch, self.writer_names))
            self._fail("MISSING_UNION_BRANCH", path, f"reader union lacking writer type: {kind.upper()}")
            return False
        return self.check(reader, branch, path)

    def _quiet(self, reader: Any, writer: Any) -> bool:
        saved = self.reasons
        self.reasons = []
        try:
            return self.check(reader, writer, "")
        finally:
            self.reasons = saved

    def _names_match(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> bool:
        full, short = writer["name"], writer["name"].rsplit(".", 1)[-1]
        aliases = set(reader.get("aliases", []))
        if reader["name"] == full or reader["name"].rsplit(".", 1)[-1] == short or full in aliases or short in aliases:
            return True
        self._fail("NAME_MISMATCH", f"{path}/name", f"expected: {full}")
        return False

    def _records(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> bool:
        key = (reader["name"], writer["name"])
        if key in self._seen:
            return True
        self._seen.add(key)
        try:
            ok = self._names_match(reader, writer, path)
            by_name = {f["name"]: f for f in writer.get("fields", [])}
            for i, field in enumerate(reader.get("fields", [])):
                found = by_name.get(field["name"])
                if found is None:
                    found = next((by_name[a] for a in field.get("aliases", []) if a in by_name), None)
                if found is None:
                    if "default" not in field:
                        self._fail("READER_FIELD_MISSING_DEFAULT_VALUE", f"{path}/fields/{i}",
                                   f"the field '{field['name']}' has no default value and is missing in the "
                                   "writer's schema")
                        ok = False
                elif not self.check(field["type"], found["type"], f"{path}/fields/{i}/type"):
                    ok = False
            return ok
        finally:
            self._seen.discard(key)

    def _enums(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> bool:
        ok = self._names_match(reader, writer, path)
        missing = [s for s in writer.get("symbols", []) if s not in reader.get("symbols", [])]
        if missing and "default" not in reader:
            self._fail("MISSING_ENUM_SYMBOLS", f"{path}/symbols", f"the reader lacks the symbols {missing}")
            ok = False
        return ok

    def _fail(self, kind: str, path: str, description: str) -> None:
        self.reasons.append(f"{{errorType:'{kind}', description:'{description}', path:'{path or '/'}'}}")


def reader_problems(reader: Any, writer: Any) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can)."""
    resolution = _Resolution(reader, writer)
    resolution.check(reader, writer, "")
    return resolution.reasons
