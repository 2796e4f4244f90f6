"""How fast the machine is while a benchmark runs: two fixed single-threaded jobs, timed before each
broker's run and reported with the results.

A shared host can give the same cores much less on one day than on another, and the load average
does not show it: on 2026-11-29 both brokers needed 1.5-2.2x the CPU per record of the day before,
at the same load.  Comparing these figures between two runs says whether their absolute numbers can
be compared; the ratios between the brokers of one run are what the targets use either way.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from typing import Any

_MIB = bytes(range(256)) * 4096
_SHA256_MIB = 64
_ROUNDS = 500_000


def _interpreter_job() -> int:
    # Small dicts, ints and short strings, the stuff of a broker's request path in Python.
    total = 0
    for i in range(_ROUNDS):
        entry = {"partition": i & 15, "offset": i, "topic": "t" + str(i & 7)}
        total += entry["offset"] + entry["partition"] + len(entry["topic"])
    return total


def sample() -> dict[str, float]:
    """Milliseconds each job takes now: the interpreter's, and sha256 over 64 MiB (C code)."""
    started = time.perf_counter()
    _interpreter_job()
    python_done = time.perf_counter()
    digest = hashlib.sha256()
    for _ in range(_SHA256_MIB):
        digest.update(_MIB)
    hashed = time.perf_counter()
    return {"t": time.time(), "python_ms": (python_done - started) * 1000, "sha256_ms": (hashed - python_done) * 1000}


def describe(samples: list[dict[str, Any]]) -> str:
    """One line for a report: each job's median and range over the run's samples."""
    if not samples:
        return "- Machine speed: not sampled"
    parts = []
    for key, label in (("python_ms", f"a fixed pure-Python job ({_ROUNDS:,} small dicts)"),
                       ("sha256_ms", f"sha256 of {_SHA256_MIB} MiB")):
        values = [s[key] for s in samples]
        parts.append(f"{label} {statistics.median(values):.0f} ms (range {min(values):.0f}-{max(values):.0f})")
    return (f"- Machine speed, sampled before each run ({len(samples)} samples): " + "; ".join(parts)
            + ". Lower is faster; absolute figures compare between runs only when these do")
