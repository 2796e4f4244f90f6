"""What a command prints: rich tables for people, or the same data as one JSON document."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass
class Report:
    """A command's result: ``data`` for ``--json``; tables (and lines) for people."""

    data: Any
    tables: list[tuple[str, Sequence[str], list[Sequence[Any]]]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    exit_code: int = 0

    def table(self, title: str, columns: Sequence[str], rows: list[Sequence[Any]]) -> Report:
        self.tables.append((title, columns, rows))
        return self


def show(report: Report, as_json: bool) -> None:
    if as_json:
        json.dump(report.data, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    console = Console(soft_wrap=True)
    for line in report.lines:
        console.print(line, highlight=False)
    for title, columns, rows in report.tables:
        table = Table(title=title or None, title_justify="left", box=None, header_style="bold", pad_edge=False)
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*("-" if v is None else _cell(v) for v in row))
        console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)
