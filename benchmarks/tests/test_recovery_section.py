"""The restart-after-kill-9 section: written at the end of RESULTS.md, replaced (not repeated) by a
later run, and kept when the single-broker report is rendered again."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import recovery, report


def _outcomes() -> list[recovery.Outcome]:
    return [recovery.Outcome(name, "v", 10 * 10**9, 11, 1000, 50.0, 0.5, serve, "1 of 11", 0.4, "checkpointed")
            for name, serve in (("pykafkad", 0.6), ("kafka", 12.0))]


def test_section_replaced_at_the_end_and_kept_by_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    md = tmp_path / "RESULTS.md"
    md.write_text("# Results\n\nbody\n")
    monkeypatch.setattr(recovery, "RESULTS", md)
    recovery.write_section(recovery.section(_outcomes(), 10.0, "make bench-recovery"))
    recovery.write_section(recovery.section(_outcomes(), 10.0, "make bench-recovery"))
    text = md.read_text()
    assert text.startswith("# Results\n\nbody\n")
    assert text.count(recovery.START_MARK) == 1 and text.rstrip().endswith(recovery.END_MARK)
    assert "| checkpointed | pykafkad |" in text and "ratio 0.05" in text
    assert report.recovery_section(text).startswith(recovery.START_MARK)
