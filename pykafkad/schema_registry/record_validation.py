"""Schema validation of a produced batch: which of its records a topic with validation refuses,
and why, as KIP-467's per-record errors.

For each checked part (key or value, ``validation_policy``) the ids the part may carry are those
its subject holds (live versions only), by the topic's subject name strategy:
* TopicNameStrategy: the subject ``<topic>-key`` / ``<topic>-value``;
* RecordNameStrategy: the subject named by the schema's record name (Avro's full name, a JSON
  Schema's ``title``, a Protobuf file's first message);
* TopicRecordNameStrategy: ``<topic>-<record name>``.
The batch is then checked in one pass in Rust (``schema_id_problems``: magic byte and id, a
binary search per record); with ``full`` each key or value is also decoded against its schema,
on a worker thread.  A refused id the broker does not know may have been registered a moment
ago: the schemas are read to their end once, and the batch checked again, before it is refused.
"""

from __future__ import annotations

from collections.abc import Iterable

import trio

from pykafkad._rust_log import decode_batches, schema_id_problems
from pykafkad.schema_registry.errors import RegistryError
from pykafkad.schema_registry.record_decoders import decoder_for
from pykafkad.schema_registry.registry_state import RegistryState, SchemaVersion
from pykafkad.schema_registry.schema_source import SchemaSource
from pykafkad.schema_registry.schema_types import Dependencies, parse_stored
from pykafkad.schema_registry.validation_policy import FieldPolicy

# (record index, what is wrong with it)
RecordErrors = list[tuple[int, str]]


def record_name(version: SchemaVersion, deps: Dependencies = ()) -> str | None:
    """The name RecordNameStrategy gives a schema's subject, or None if it has none."""
    parsed = parse_stored(version.schema, version.schema_type, deps)
    if parsed is None:
        return None
    if version.schema_type == "AVRO":
        schema = parsed.parsed
        return schema.get("name") if isinstance(schema, dict) else None
    if version.schema_type == "JSON":
        title = parsed.parsed.get("title") if isinstance(parsed.parsed, dict) else None
        return title if isinstance(title, str) else None
    file = parsed.parsed
    if not file.message_type:
        return None
    return f"{file.package}.{file.message_type[0].name}" if file.package else file.message_type[0].name


# An allowed id's version, and the schemas its references name.
Allowed = dict[int, tuple[SchemaVersion, Dependencies]]


def _resolved(state: RegistryState, version: SchemaVersion) -> tuple[SchemaVersion, Dependencies] | None:
    try:
        return version, state.dependencies(list(version.references))
    except RegistryError:
        return None  # a reference no longer resolves: the id cannot be checked, so it is not allowed


class AllowedIds:
    """The ids each (topic, policy) may carry, worked out once per state of the registry."""

    def __init__(self) -> None:
        self._applied = -2
        self._by_policy: dict[tuple[str, FieldPolicy], Allowed] = {}

    async def of(self, state: RegistryState, topic: str, policy: FieldPolicy) -> Allowed:
        if state.applied != self._applied:
            self._applied = state.applied
            self._by_policy.clear()
        key = (topic, policy)
        found = self._by_policy.get(key)
        if found is None:
            applied = state.applied
            found = await self._work_out(state, topic, policy)
            if state.applied == applied == self._applied:
                self._by_policy[key] = found
        return found

    @staticmethod
    async def _work_out(state: RegistryState, topic: str, policy: FieldPolicy) -> Allowed:
        if policy.strategy == "TopicNameStrategy":
            return {v.id: found for v in state.versions(f"{topic}-{policy.part}")
                    if (found := _resolved(state, v)) is not None}
        # The record name strategies need each schema's name: a Protobuf schema may run protoc.
        live = [(subject, found) for subject in list(state.subjects) for v in state.versions(subject)
                if (found := _resolved(state, v)) is not None]
        prefix = f"{topic}-" if policy.strategy == "TopicRecordNameStrategy" else ""

        def named() -> Allowed:
            return {v.id: (v, deps) for subject, (v, deps) in live
                    if (name := record_name(v, deps)) and subject == prefix + name}

        return await trio.to_thread.run_sync(named)


class RecordValidator:
    """The broker's schema validation: one per broker, holding what it has worked out."""

    def __init__(self, source: SchemaSource) -> None:
        self.source = source
        self._allowed = AllowedIds()

    async def refused(self, topic: str, policies: tuple[FieldPolicy, ...], records: bytes | memoryview
                      ) -> RecordErrors:
        """The records of ``records`` (one produced batch) that ``policies`` refuse; [] if none.
        SchemasUnavailable if the schemas cannot be read; LogError (CORRUPT_MESSAGE) for a batch
        that cannot be decoded."""
        since = trio.current_time()
        errors, unknown_ids = await self._check(await self.source.state(), topic, policies, records)
        if unknown_ids:
            errors, _ = await self._check(await self.source.refresh(since), topic, policies, records)
        return errors

    async def _check(self, state: RegistryState, topic: str, policies: tuple[FieldPolicy, ...],
                     records: bytes | memoryview) -> tuple[RecordErrors, bool]:
        """The refused records, and whether an id was refused that a newer state might hold."""
        allowed = {p.part: await self._allowed.of(state, topic, p) for p in policies}
        key_ids = sorted(allowed["key"]) if "key" in allowed else None
        value_ids = sorted(allowed["value"]) if "value" in allowed else None
        by_part = {p.part: p for p in policies}
        errors: dict[int, str] = {}
        maybe_newer = False
        for index, is_key, schema_id in schema_id_problems(records, key_ids, value_ids):
            policy = by_part["key" if is_key else "value"]
            maybe_newer |= schema_id is not None
            errors.setdefault(index, _id_problem(topic, policy, schema_id, state))
        full = [p for p in policies if p.full]
        if full and not errors:
            # Decoded only when every id passed: a batch with a refused record is refused whole.
            errors.update(await trio.to_thread.run_sync(_decode_problems, records, full, allowed))
        return sorted(errors.items()), maybe_newer


def _id_problem(topic: str, policy: FieldPolicy, schema_id: int | None, state: RegistryState) -> str:
    part = policy.part
    if schema_id is None:
        return (f"its {part} is not in the schema registry's wire format (magic byte 0 and a schema id); "
                f"produce it with a schema registry serializer")
    if schema_id not in state.by_id:
        return f"its {part} has schema id {schema_id}, which the schema registry does not have"
    if policy.strategy == "TopicNameStrategy":
        return f"its {part} has schema id {schema_id}, which is not registered under subject '{topic}-{part}'"
    return (f"its {part} has schema id {schema_id}, which is not registered under the subject its record name "
            f"gives ({policy.strategy})")


def _decode_problems(records: bytes | memoryview, policies: Iterable[FieldPolicy],
                     allowed: dict[str, Allowed]) -> dict[int, str]:
    errors: dict[int, str] = {}
    for index, (_offset, _ts, key, value, _headers) in enumerate(decode_batches(records)):
        for policy in policies:
            payload = key if policy.is_key else value
            if payload is None:
                continue
            version, deps = allowed[policy.part][int.from_bytes(payload[1:5], "big", signed=True)]
            problem = decoder_for(version, deps)(payload)
            if problem is not None:
                errors.setdefault(index, f"its {policy.part} (schema id {version.id}, subject '{version.subject}') "
                                         f"is {problem}")
    return errors
