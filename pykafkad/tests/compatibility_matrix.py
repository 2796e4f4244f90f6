"""The check the three compatibility matrices share: each level's verdict on one change."""

from __future__ import annotations

from typing import Any

from pykafkad.schema_registry.compatibility import problems


def assert_verdicts(change: str, old: Any, new: Any, verdicts: dict[str, bool]) -> None:
    """``new`` after ``old`` (parsed schemas) is compatible under each level exactly when ``verdicts`` says."""
    for level, compatible in verdicts.items():
        found = problems(level, new, [(1, old)])
        assert (not found) == compatible, f"{change} under {level}: {found}"
