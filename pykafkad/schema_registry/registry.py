"""The registry's operations, as Confluent's API defines them: register, look up, delete (soft, then
permanent), compatibility levels and modes.  Each change is a decision on the state the topic gave,
made and written through ``SchemasTopic.change``, which runs it again if another instance wrote in
between: ids and versions are handed out once."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import trio

from pykafkad.schema_registry import errors
from pykafkad.schema_registry.compatibility import LEVELS, problems
from pykafkad.schema_registry.registry_state import (
    RegistryState,
    SchemaVersion,
    schema_key,
    schema_value,
    setting_key,
)
from pykafkad.schema_registry.schema_types import Dependencies, ParsedSchema, parse, parse_stored
from pykafkad.schema_registry.schemas_topic import Records, SchemasTopic

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
MAX_VERSION = 2**31 - 1


def parse_version(text: str) -> int | None:
    """A version path segment: a number, or None for ``latest`` / ``-1``; 42202 otherwise."""
    if text in ("latest", "-1"):
        return None
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_VERSION:
        return int(text)
    raise errors.invalid_version(text)


class Registry:
    def __init__(self, state: RegistryState, topic: SchemasTopic) -> None:
        self.state = state
        self.topic = topic

    # -- reading -----------------------------------------------------------------------------------

    def version(self, subject: str, version: str, deleted: bool = False) -> SchemaVersion:
        wanted = parse_version(version)
        if subject not in self.state.subjects:
            raise errors.subject_not_found(subject)
        every = self.state.versions(subject, deleted=True)
        live = [v for v in every if not v.deleted]
        if wanted is None:
            pool = every if deleted else live
            if not pool:
                raise errors.subject_not_found(subject) if not every else errors.subject_soft_deleted(subject)
            return pool[-1]
        found = next((v for v in every if v.version == wanted), None)
        if found is None or (found.deleted and not deleted):
            if not live and not deleted:
                raise errors.subject_not_found(subject)
            raise errors.version_not_found(subject, wanted)
        return found

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        found = self.state.versions(subject, deleted)
        if not found:
            raise errors.subject_not_found(subject)
        return [v.version for v in found]

    def by_id(self, schema_id: int) -> SchemaVersion:
        found = self.state.by_id.get(schema_id)
        if found is None:
            raise errors.schema_not_found()
        return found

    def id_holders(self, schema_id: int, deleted: bool = False) -> list[SchemaVersion]:
        self.by_id(schema_id)
        held = [self.state.subjects[s][v] for s, v in self.state.holders.get(schema_id, ())]
        return sorted((h for h in held if deleted or not h.deleted), key=lambda h: (h.subject, h.version))

    async def lookup(self, subject: str, text: str, schema_type: str, normalize: bool,
                     deleted: bool, references: list[Any] | None = None) -> SchemaVersion:
        """``POST /subjects/{subject}``: the version of ``subject`` that is this schema."""
        schema = await self._parse(text, schema_type, normalize, subject, references or [])
        if not self.state.versions(subject, deleted=True):
            raise errors.subject_not_found(subject)
        for entry in reversed(self.state.versions(subject, deleted)):
            if self._same(entry, schema, normalize):
                return entry
        raise errors.schema_not_found()

    # -- registering -------------------------------------------------------------------------------

    async def register(self, subject: str, text: str, schema_type: str, references: list[Any],
                       normalize: bool) -> int:
        """``POST /subjects/{subject}/versions``: the id of the schema, registered if it is new there."""
        schema = await self._parse(text, schema_type, normalize, subject, references)
        refs = tuple(references)

        def decide() -> tuple[Records, int]:
            self._writable(subject)
            if self.state.mode(subject) == "IMPORT":
                raise errors.operation_not_permitted(
                    f"Subject {subject} is in import mode: a schema is registered with its \"id\" (and "
                    "\"version\"); set the mode back to READWRITE to have ids handed out")
            every = self.state.versions(subject, deleted=True)
            live = [v for v in every if not v.deleted]
            for entry in reversed(live):
                if self._same(entry, schema, normalize) and entry.references == refs:
                    return [], entry.id
            earlier = [(v.version, s) for v in live if (s := self._stored(v)) is not None]
            reasons = problems(self.state.level(subject), schema, earlier)
            if reasons:
                raise errors.incompatible(subject, reasons)
            schema_id = self.state.id_of(schema_type, schema.text) if not refs else None
            if schema_id is None:
                schema_id = self.state.max_id + 1
            version = (every[-1].version if every else 0) + 1
            entry = SchemaVersion(subject, version, schema_id, schema.text, schema_type, references=refs)
            return [(schema_key(subject, version), schema_value(entry))], schema_id

        return await self.topic.change(decide)

    async def import_schema(self, subject: str, text: str, schema_type: str, references: list[Any], schema_id: int,
                            version: int | None) -> int:
        """A registration with its id (and version) given, as an export from another registry holds
        them: only in IMPORT mode, with no compatibility check (Confluent's import)."""
        schema = await self._parse(text, schema_type, False, subject, references)

        def decide() -> tuple[Records, int]:
            if self.state.mode(subject) != "IMPORT":
                raise errors.operation_not_permitted(
                    f"Subject {subject} is not in import mode: set the mode to IMPORT (PUT /mode or "
                    f"/mode/{subject}) to register a schema with its id")
            held = self.state.by_id.get(schema_id)
            if held is not None and (held.schema_type, held.schema) != (schema_type, schema.text):
                raise errors.operation_not_permitted(
                    f"Overwrite new schema with id {schema_id} is not permitted: the id holds another schema")
            every = self.state.versions(subject, deleted=True)
            number = version if version is not None else (every[-1].version if every else 0) + 1
            existing = next((v for v in every if v.version == number), None)
            if existing is not None:
                if existing.id == schema_id and not existing.deleted:
                    return [], schema_id
                raise errors.operation_not_permitted(
                    f"Version {number} of subject {subject} exists already with id {existing.id}")
            entry = SchemaVersion(subject, number, schema_id, schema.text, schema_type, references=tuple(references))
            return [(schema_key(subject, number), schema_value(entry))], schema_id

        return await self.topic.change(decide)

    async def compatibility(self, subject: str, version: str | None, text: str, schema_type: str,
                            normalize: bool, references: list[Any] | None = None) -> list[str]:
        """``POST /compatibility/...``: why the schema may not be registered next (empty: it may)."""
        schema = await self._parse(text, schema_type, normalize, subject, references or [])
        live = self.state.versions(subject)
        if version is not None:
            against = [self.version(subject, version)]
            level = self.state.level(subject).removesuffix("_TRANSITIVE")
        else:
            against = live
            level = self.state.level(subject)
        earlier = [(v.version, s) for v in against if (s := self._stored(v)) is not None]
        return problems(level, schema, earlier)

    async def _parse(self, text: str, schema_type: str, normalize: bool, subject: str,
                     references: list[Any]) -> ParsedSchema:
        """The new schema, with the schemas its references name, and the subject's stored ones made
        ready for the checks, parsed in a thread: a Protobuf schema is compiled by protoc, which the
        event loop must not wait for."""
        deps = self.state.dependencies(references)
        stored = [(v.schema, v.schema_type, d) for v in self.state.versions(subject, deleted=True)
                  if (d := self._dependencies(v)) is not None]

        def parse_all() -> ParsedSchema:
            for stored_text, stored_type, stored_deps in stored:
                parse_stored(stored_text, stored_type, stored_deps)
            return parse(text, schema_type, normalize, deps)

        return await trio.to_thread.run_sync(parse_all)

    def _dependencies(self, entry: SchemaVersion) -> Dependencies | None:
        """A stored version's references resolved; None if one no longer resolves."""
        try:
            return self.state.dependencies(list(entry.references))
        except errors.RegistryError:
            return None

    def _stored(self, entry: SchemaVersion) -> ParsedSchema | None:
        deps = self._dependencies(entry)
        return None if deps is None else parse_stored(entry.schema, entry.schema_type, deps)

    def _same(self, entry: SchemaVersion, schema: ParsedSchema, normalize: bool) -> bool:
        if entry.schema_type != schema.schema_type:
            return False
        if entry.schema == schema.text:
            return True
        if not normalize:
            return False
        deps = self._dependencies(entry)
        stored = None if deps is None else parse_stored(entry.schema, entry.schema_type, deps)
        return stored is not None and parse(entry.schema, entry.schema_type, True, deps).text == schema.text

    # -- deleting ----------------------------------------------------------------------------------

    async def delete_version(self, subject: str, version: str, permanent: bool) -> int:
        def decide() -> tuple[Records, int]:
            self._writable(subject)
            entry = self.version(subject, version, deleted=permanent)
            by = self.state.referenced_by(subject, entry.version)
            if by:
                raise errors.reference_exists(subject, entry.version, by)
            if permanent:
                if not entry.deleted:
                    raise errors.version_not_soft_deleted(subject, entry.version)
                return [(setting_key("ID_FLOOR", None), {"id": self.state.max_id}),
                        (schema_key(subject, entry.version), None)], entry.version
            if entry.deleted:
                raise errors.version_soft_deleted(subject, entry.version)
            return [(schema_key(subject, entry.version), schema_value(replace(entry, deleted=True)))], entry.version

        return await self.topic.change(decide)

    async def delete_subject(self, subject: str, permanent: bool) -> list[int]:
        def decide() -> tuple[Records, list[int]]:
            self._writable(subject)
            every = self.state.versions(subject, deleted=True)
            if not every:
                raise errors.subject_not_found(subject)
            live = [v for v in every if not v.deleted]
            for v in every:
                by = self.state.referenced_by(subject, v.version)
                if by:
                    raise errors.reference_exists(subject, v.version, by)
            if permanent:
                if live:
                    raise errors.subject_not_soft_deleted(subject)
                records: Records = [(setting_key("ID_FLOOR", None), {"id": self.state.max_id})]
                return records + [(schema_key(subject, v.version), None) for v in every], [v.version for v in every]
            if not live:
                raise errors.subject_soft_deleted(subject)
            records = [(schema_key(subject, v.version), schema_value(replace(v, deleted=True))) for v in live]
            records.append((setting_key("DELETE_SUBJECT", subject), {"subject": subject, "version": live[-1].version}))
            return records, [v.version for v in live]

        return await self.topic.change(decide)

    def _writable(self, subject: str) -> None:
        if self.state.mode(subject).startswith("READONLY"):
            raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")

    # -- levels and modes --------------------------------------------------------------------------

    async def set_level(self, subject: str | None, level: Any) -> str:
        if not isinstance(level, str) or level.upper() not in LEVELS:
            raise errors.invalid_compatibility_level(level)
        chosen = level.upper()
        return await self.topic.change(
            lambda: ([(setting_key("CONFIG", subject), {"compatibilityLevel": chosen})], chosen))

    async def delete_level(self, subject: str | None) -> str:
        def decide() -> tuple[Records, str]:
            if subject is not None and subject not in self.state.levels:
                if subject not in self.state.subjects:
                    raise errors.subject_not_found(subject)
                raise errors.subject_compatibility_not_configured(subject)
            return [(setting_key("CONFIG", subject), None)], self.state.level(subject)

        return await self.topic.change(decide)

    async def set_mode(self, subject: str | None, mode: Any, force: bool = False) -> str:
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise errors.invalid_mode(mode)
        chosen = mode.upper()

        def decide() -> tuple[Records, str]:
            # IMPORT only where no schema was ever registered (soft-deleted ones count), unless forced:
            # an imported id must not meet one handed out here.
            if chosen == "IMPORT" and not force and self.state.mode(subject) != "IMPORT":
                found = self.state.subjects.get(subject) if subject is not None else self.state.subjects
                if found:
                    where = f"subject {subject}" if subject is not None else "the registry"
                    raise errors.operation_not_permitted(
                        f"Cannot import since found existing schemas in {where}: delete them permanently, "
                        "or set the mode with force=true")
            return [(setting_key("MODE", subject), {"mode": chosen})], chosen

        return await self.topic.change(decide)

    async def delete_mode(self, subject: str) -> str:
        def decide() -> tuple[Records, str]:
            if subject not in self.state.modes:
                raise errors.subject_mode_not_configured(subject)
            return [(setting_key("MODE", subject), None)], self.state.mode(subject)

        return await self.topic.change(decide)
