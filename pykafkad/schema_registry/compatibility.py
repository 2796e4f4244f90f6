"""Compatibility levels (Confluent's names) and the check of a new schema against a subject's
versions: the latest one, or all of them for the transitive levels, oldest first."""

from __future__ import annotations

from collections.abc import Sequence

from pykafkad.schema_registry.schema_types import ParsedSchema, reader_problems

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
DEFAULT_LEVEL = "BACKWARD"


def problems(level: str, new: ParsedSchema, earlier: Sequence[tuple[int, ParsedSchema]]) -> list[str]:
    """Why ``new`` may not follow ``earlier`` (version, schema) pairs under ``level`` (empty: it may)."""
    if level == "NONE" or not earlier:
        return []
    against = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    backward = level.startswith(("BACKWARD", "FULL"))
    forward = level.startswith(("FORWARD", "FULL"))
    found: list[str] = []
    for version, old in against:
        reasons: list[str] = []
        if backward:
            reasons += reader_problems(new, old)
        if forward:
            reasons += reader_problems(old, new)
        if reasons:
            found += [*reasons, f"{{oldSchemaVersion: {version}}}", f"{{oldSchema: '{old.text}'}}",
                      f"{{compatibility: '{level}'}}"]
    return found
