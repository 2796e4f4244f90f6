"""The README's countable claims match the code."""

from __future__ import annotations

import re
from pathlib import Path

from pykafkad.handlers import APIS

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_counts_the_apis_served() -> None:
    claimed = re.search(r"\| (\d+) Kafka APIs;", README.read_text())
    assert claimed is not None, "README.md no longer says how many Kafka APIs are served"
    assert int(claimed.group(1)) == len(APIS)
