"""Run Apache Kafka's own Java command-line tools (Kafka 4.4.0 jars) against the broker.

The jars come from `make java-deps` (compat_tests/java/pom.xml), which copies
them into one directory; the Makefile passes that directory to pytest as env
JAVA_LIB.  Without it the Java tests fail with a message saying so: they are
never skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pykafkad.kafka_tools import SCRIPTS

# The same classes `make tools` writes scripts for, by script name without ".sh".
TOOLS = {name.removesuffix(".sh"): main_class for name, main_class in SCRIPTS.items()}

DEFAULT_TIMEOUT_S = 90.0


def java_classpath() -> str:
    lib = os.environ.get("JAVA_LIB")
    if not lib:
        pytest.fail(
            "env JAVA_LIB is not set: run `make java-deps` and run the tests with "
            "JAVA_LIB=<repo>/.cache/java/lib (as `make test-python` does)",
            pytrace=False,
        )
    path = Path(lib)
    jars = sorted(path.glob("kafka-tools-*.jar")) if path.is_dir() else []
    if not jars:
        pytest.fail(f"JAVA_LIB={lib} holds no kafka-tools jar: run `make java-deps`", pytrace=False)
    return str(path / "*")


def java_executable() -> str:
    java = shutil.which("java")
    if java is None:
        pytest.fail("no `java` on PATH: the Java tool tests need a JDK 17+", pytrace=False)
    return java


def run_tool(
    tool: str,
    args: list[str],
    *,
    stdin: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run one Kafka tool (a name from TOOLS) to completion, with a hard timeout.

    Returns the CompletedProcess; with check=True a non-zero exit fails the test
    with the tool's output.
    """
    cmd = [
        java_executable(),
        "-Xshare:auto",
        "-XX:TieredStopAtLevel=1",
        "-Xmx256m",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-Dorg.slf4j.simpleLogger.logFile=System.err",
        "-cp",
        java_classpath(),
        TOOLS[tool],
        *args,
    ]
    try:
        result = subprocess.run(
            cmd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=None if stdin is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(
            f"{tool} {' '.join(args)} did not finish within {timeout}s\n"
            f"--- stdout ---\n{out[-4000:]}\n--- stderr ---\n{err[-4000:]}",
            pytrace=False,
        )
    if check and result.returncode != 0:
        pytest.fail(
            f"{tool} {' '.join(args)} exited {result.returncode}\n"
            f"--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-4000:]}",
            pytrace=False,
        )
    return result


def table_row(header: str, row: str) -> dict[str, str]:
    """One row of a table a Kafka tool printed, by column name.  Kafka 4.4's tools pad their columns
    with spaces (a value may be empty, so split at the header's column starts); older ones used tabs."""
    if "\t" in header:
        return dict(zip([h.strip() for h in header.split("\t")], [r.strip() for r in row.split("\t")], strict=False))
    starts = [(m.start(), m.group()) for m in re.finditer(r"\S+", header)]
    ends = [start for start, _ in starts[1:]] + [len(row)]
    return {name: row[start:end].strip() for (start, name), end in zip(starts, ends, strict=True)}


def stop_java(proc: subprocess.Popen) -> None:
    """Stop a Java program we started (Connect, Streams, MirrorMaker): SIGTERM runs its shutdown
    hooks; one that has not exited within a minute is killed."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
