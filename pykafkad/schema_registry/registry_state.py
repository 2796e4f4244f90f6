"""What the ``_schemas`` topic says, as the registry answers it: each subject's versions, the
schema behind each id, the compatibility levels and the modes.

Its only input is the topic's records, applied in offset order (``apply``), in Confluent's record
format, so a restart rebuilds it by replaying the topic, and a topic written by Confluent's registry
reads the same.  The record kinds (the key's ``keytype``):

* ``SCHEMA`` (subject, version) -> the version's id, schema and ``deleted`` flag; a tombstone is a
  permanent delete;
* ``CONFIG`` and ``MODE`` (subject, or null for the global one) -> a level or mode; a tombstone
  removes a subject's own;
* ``DELETE_SUBJECT`` -> the subject's versions up to one are soft-deleted;
* ``ID_FLOOR`` (pykafkad's own) -> the highest id ever handed out, written before a permanent
  delete so that an id is never reused once compaction has dropped the tombstoned versions;
* ``NOOP``, ``CLEAR_SUBJECT`` and kinds this registry does not know: read and skipped.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from pykafkad.schema_registry import errors
from pykafkad.schema_registry.compatibility import DEFAULT_LEVEL

log = logging.getLogger(__name__)

DEFAULT_MODE = "READWRITE"
MAX_REFERENCE_DEPTH = 32


@dataclass(frozen=True)
class SchemaVersion:
    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = "AVRO"
    deleted: bool = False
    references: tuple[Any, ...] = ()

    def answer(self) -> dict[str, Any]:
        """The version as ``GET /subjects/{subject}/versions/{version}`` answers it."""
        body: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id,
                                "schema": self.schema}
        if self.schema_type != "AVRO":
            body["schemaType"] = self.schema_type
        if self.references:
            body["references"] = list(self.references)
        return body


@dataclass
class RegistryState:
    subjects: dict[str, dict[int, SchemaVersion]] = field(default_factory=dict)
    # id -> the versions that hold it (a schema registered under several subjects keeps one id).
    holders: dict[int, set[tuple[str, int]]] = field(default_factory=dict)
    # The schema of each id; kept for an id as long as a version holds it.
    by_id: dict[int, SchemaVersion] = field(default_factory=dict)
    by_schema: dict[tuple[str, str], int] = field(default_factory=dict)
    levels: dict[str | None, str] = field(default_factory=dict)
    modes: dict[str | None, str] = field(default_factory=dict)
    max_id: int = 0
    # The offset of the last record applied, -1 before the first.
    applied: int = -1

    # -- applying the topic -----------------------------------------------------------------------

    def apply(self, offset: int, key: bytes | None, value: bytes | None) -> None:
        self.applied = max(self.applied, offset)
        try:
            k = json.loads(key) if key else None
            v = json.loads(value) if value is not None else None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            log.warning("_schemas offset %d: not JSON (%s); skipped", offset, e)
            return
        if not isinstance(k, dict):
            return
        kind = k.get("keytype")
        try:
            if kind == "SCHEMA":
                self._schema(k, v)
            elif kind == "CONFIG":
                self._setting(self.levels, k, v, "compatibilityLevel")
            elif kind == "MODE":
                self._setting(self.modes, k, v, "mode")
            elif kind == "DELETE_SUBJECT" and isinstance(v, dict):
                for version in list(self.subjects.get(k["subject"], {}).values()):
                    if version.version <= int(v.get("version", 0)):
                        self._put(replace(version, deleted=True))
            elif kind == "ID_FLOOR" and isinstance(v, dict):
                self.max_id = max(self.max_id, int(v["id"]))
        except (KeyError, TypeError, ValueError) as e:
            log.warning("_schemas offset %d: a %s record this registry cannot read (%s); skipped", offset, kind, e)

    def _schema(self, k: dict[str, Any], v: dict[str, Any] | None) -> None:
        subject, version = str(k["subject"]), int(k["version"])
        if v is None:
            old = self.subjects.get(subject, {}).pop(version, None)
            if old is not None:
                self._release(old)
            if subject in self.subjects and not self.subjects[subject]:
                del self.subjects[subject]
            return
        self._put(SchemaVersion(subject, version, int(v["id"]), str(v["schema"]), str(v.get("schemaType") or "AVRO"),
                                bool(v.get("deleted", False)), tuple(v.get("references") or ())))

    def _put(self, entry: SchemaVersion) -> None:
        versions = self.subjects.setdefault(entry.subject, {})
        old = versions.get(entry.version)
        if old is not None:
            self._release(old)
        versions[entry.version] = entry
        self.holders.setdefault(entry.id, set()).add((entry.subject, entry.version))
        self.by_id.setdefault(entry.id, entry)
        self.by_schema.setdefault((entry.schema_type, entry.schema), entry.id)
        self.max_id = max(self.max_id, entry.id)

    def _release(self, entry: SchemaVersion) -> None:
        holders = self.holders.get(entry.id, set())
        holders.discard((entry.subject, entry.version))
        if not holders:
            self.holders.pop(entry.id, None)
            gone = self.by_id.pop(entry.id, None)
            if gone is not None and self.by_schema.get((gone.schema_type, gone.schema)) == entry.id:
                del self.by_schema[(gone.schema_type, gone.schema)]

    @staticmethod
    def _setting(settings: dict[str | None, str], k: dict[str, Any], v: dict[str, Any] | None, name: str) -> None:
        subject = k.get("subject")
        if v is None:
            settings.pop(subject, None)
        else:
            settings[subject] = str(v[name])

    # -- questions ---------------------------------------------------------------------------------

    def versions(self, subject: str, deleted: bool = False) -> list[SchemaVersion]:
        """The subject's versions, oldest first; soft-deleted ones only with ``deleted``."""
        found = self.subjects.get(subject, {})
        return [found[v] for v in sorted(found) if deleted or not found[v].deleted]

    def subject_names(self, deleted: bool = False, prefix: str = "") -> list[str]:
        return sorted(s for s in self.subjects if s.startswith(prefix) and self.versions(s, deleted))

    def level(self, subject: str | None) -> str:
        """The level that applies to ``subject``: its own, else the global one, else BACKWARD."""
        return self.levels.get(subject) or self.levels.get(None) or DEFAULT_LEVEL

    def mode(self, subject: str | None) -> str:
        return self.modes.get(subject) or self.modes.get(None) or DEFAULT_MODE

    def id_of(self, schema_type: str, schema: str) -> int | None:
        return self.by_schema.get((schema_type, schema))

    def dependencies(self, references: Any, depth: int = 0,
                     path: tuple[tuple[str, int], ...] = ()) -> tuple[Any, ...]:
        """``references`` (Confluent's ``[{"name", "subject", "version"}]``) resolved, with theirs:
        ``schema_types.Dependencies``.  42201 for a malformed one, one naming no version, or
        references that lead back to a version on their own ``path`` (a cycle, which ``-1``,
        "the latest version", or an import can make)."""
        if not isinstance(references, list | tuple):
            raise errors.invalid_schema("\"references\" must be a list")
        if depth > MAX_REFERENCE_DEPTH:
            raise errors.invalid_schema(f"references nested more than {MAX_REFERENCE_DEPTH} deep")
        found = []
        for ref in references:
            if not (isinstance(ref, dict) and isinstance(ref.get("name"), str) and isinstance(ref.get("subject"), str)
                    and isinstance(ref.get("version"), int) and not isinstance(ref.get("version"), bool)):
                raise errors.invalid_schema(f"a reference is {{\"name\": str, \"subject\": str, \"version\": int}}, "
                                            f"not {json.dumps(ref)[:200]}")
            versions = self.versions(ref["subject"])
            target = versions[-1] if ref["version"] == -1 and versions else next(
                (v for v in versions if v.version == ref["version"]), None)
            if target is None:
                raise errors.invalid_schema(f"reference {ref['name']}: subject {ref['subject']} has no version "
                                            f"{ref['version']}; register it first")
            step = (target.subject, target.version)
            if step in path:
                cycle = " -> ".join(f"{subject} v{version}" for subject, version in (*path[path.index(step):], step))
                raise errors.invalid_schema(f"the references form a cycle: {cycle}")
            found.append((ref["name"], target.schema_type, target.schema,
                          self.dependencies(list(target.references), depth + 1, (*path, step))))
        return tuple(found)

    def referenced_by(self, subject: str, version: int) -> list[int]:
        """The ids of the live versions whose references name ``subject`` ``version``."""
        return sorted({v.id for versions in self.subjects.values() for v in versions.values()
                       if not v.deleted and any(isinstance(r, dict) and r.get("subject") == subject
                                                and r.get("version") == version for r in v.references)})


def schema_key(subject: str, version: int) -> dict[str, Any]:
    return {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}


def schema_value(entry: SchemaVersion) -> dict[str, Any]:
    value: dict[str, Any] = {"subject": entry.subject, "version": entry.version, "id": entry.id,
                             "schema": entry.schema, "deleted": entry.deleted}
    if entry.schema_type != "AVRO":
        value["schemaType"] = entry.schema_type
    if entry.references:
        value["references"] = list(entry.references)
    return value


def setting_key(kind: str, subject: str | None) -> dict[str, Any]:
    return {"keytype": kind, "subject": subject, "magic": 0}
