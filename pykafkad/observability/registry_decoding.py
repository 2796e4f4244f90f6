"""The console's view of record keys and values written in the schema registry's wire format
(magic byte 0, the schema id, the datum): each decoded through the registry's schema as JSON,
with the schema it names (id, type, subject and version), beside the raw bytes; and the subjects
that belong to a topic.

The schemas come from where schema validation reads them (``Broker.schema_source``): this
broker's own registry, or its reader of the registry's topic.  A cluster whose registry topic
does not exist has no schemas, and the console says so rather than creating the topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from pykafkad.schema_registry.errors import RegistryError
from pykafkad.schema_registry.record_decoders import HEADER, reader_for
from pykafkad.schema_registry.registry_state import RegistryState, SchemaVersion
from pykafkad.schema_registry.schema_source import SchemasUnavailable

if TYPE_CHECKING:
    from pykafkad.broker import Broker

MAGIC = 0


class RegistryUnavailable(Exception):
    """The registry's schemas cannot be read: one line saying why and what to do."""


@dataclass(frozen=True)
class Decoded:
    """One key or value: its datum as JSON text (None when it could not be decoded), the schema
    it names or why it was not decoded, and its raw bytes in hex."""

    text: str | None
    schema: str
    raw: str | None


def schema_id(data: bytes | None) -> int | None:
    """The schema id a payload in the registry's wire format names, or None."""
    if data is None or len(data) < HEADER or data[0] != MAGIC:
        return None
    return int.from_bytes(data[1:HEADER], "big")


async def registry_state(broker: Broker, unknown_ids: frozenset[int] = frozenset()) -> RegistryState:
    """The registry's schemas as this broker reads them, read again to the topic's end when it
    does not know one of ``unknown_ids`` (written since it last read)."""
    topic = broker.config["schema.registry.topic"]
    if not broker.config["schema.registry.listener"] and topic not in broker.metadata.topics:
        raise RegistryUnavailable(f"no schema registry has written to {topic} on this cluster: run one in a "
                                  "broker (schema.registry.listener) or with `pykafkad registry`")
    source = broker.schema_source()
    try:
        state = await source.state()
        if any(i not in state.by_id for i in unknown_ids):
            state = await source.refresh(trio.current_time())
    except SchemasUnavailable as e:
        raise RegistryUnavailable(f"cannot read the schema registry's schemas: {e}") from None
    return state


def wanted_ids(payloads: list[bytes | None]) -> frozenset[int]:
    return frozenset(i for i in map(schema_id, payloads) if i is not None)


@dataclass(frozen=True)
class PageSchemas:
    """The schemas a page of records names, looked up on the event loop (the registry's state
    changes there), so that decoding on a worker thread reads nothing that changes."""

    found: dict[int, tuple[SchemaVersion, Any, str]]  # id -> (version, its dependencies, where it is)
    problems: dict[int, str]  # id -> why its records cannot be decoded


def page_schemas(state: RegistryState, ids: frozenset[int]) -> PageSchemas:
    found: dict[int, tuple[SchemaVersion, Any, str]] = {}
    problems: dict[int, str] = {}
    for wanted in ids:
        version = state.by_id.get(wanted)
        if version is None:
            problems[wanted] = f"schema id {wanted} is not in the registry"
            continue
        subject, number = min(state.holders.get(version.id, {(version.subject, version.version)}))
        where = f"id {version.id} · {version.schema_type} · {subject} v{number}"
        try:
            found[wanted] = (version, state.dependencies(list(version.references)), where)
        except RegistryError as e:
            problems[wanted] = f"{where}: its references do not resolve ({e.message})"
    return PageSchemas(found, problems)


def decode(schemas: PageSchemas, data: bytes | None) -> Decoded:
    """``data`` decoded through the schema its id names (on a worker thread: it parses schemas)."""
    if data is None:
        return Decoded(None, "", None)
    raw = data.hex(" ")
    found = schema_id(data)
    if found is None:
        return Decoded(data.decode("utf-8", "replace"), "not in the registry's wire format", raw)
    if found not in schemas.found:
        return Decoded(None, schemas.problems.get(found, f"schema id {found} is not in the registry"), raw)
    version, dependencies, where = schemas.found[found]
    try:
        datum = reader_for(version, dependencies)(data)
    except ValueError as e:
        return Decoded(None, f"{where}: it is {e}", raw)
    return Decoded(json.dumps(datum, indent=2, ensure_ascii=False), where, raw)


def topic_subjects(state: RegistryState, topic: str) -> list[dict[str, Any]]:
    """The subjects named for ``topic`` (TopicNameStrategy's ``<topic>-key`` and ``<topic>-value``,
    TopicRecordNameStrategy's ``<topic>-<record>``) with their live versions, newest last."""
    out = []
    for subject in state.subject_names(prefix=f"{topic}-"):
        versions = state.versions(subject)
        out.append({"subject": subject, "type": versions[-1].schema_type, "level": state.level(subject),
                    "versions": [{"version": v.version, "id": v.id} for v in versions]})
    return out
