"""Run Apache Kafka's own Java command-line tools (Kafka 4.4.0 jars) against the broker.

The jars come from `make java-deps` (compat_tests/java/pom.xml), which copies
them into one directory; the Makefile passes that directory to pytest as env
JAVA_LIB.  Without it the Java tests fail with a message saying so: they are
never skipped.

Starting a JVM is most of what a short tool run costs, so the suite pays it once where it can: each
tool's run keeps the classes it loaded in a class-data-sharing archive (AppCDS, made by its first
run, under ``.cache/java/cds``) that later runs map instead of loading the jars again (0.7 -> 0.4 s
for kafka-topics --list), and the single-file Java programs under ``java/`` are compiled once
(``java_program``) instead of by every launch (1.2 -> 0.3 s).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from pykafkad.kafka_tools import SCRIPTS

# The same classes `make tools` writes scripts for, by script name without ".sh".
TOOLS = {name.removesuffix(".sh"): main_class for name, main_class in SCRIPTS.items()}

DEFAULT_TIMEOUT_S = 90.0
JAVA_CACHE = Path(__file__).resolve().parent.parent / ".cache" / "java"
# Kafka's tools print to stdout, and so would the JVM's warnings about an archive it cannot map.
QUIET_CDS = "-Xlog:disable"


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


@functools.cache
def _jars_stamp(classpath: str) -> str:
    """What the classes of ``classpath`` (a directory's jars) and the JVM are: an archive made
    against other jars or another JDK is never offered to the JVM."""
    digest = hashlib.sha256(os.path.realpath(java_executable()).encode())
    for entry in classpath.split(os.pathsep):
        for jar in sorted(Path(entry.removesuffix("*")).glob("*.jar")) if entry.endswith("*") else [Path(entry)]:
            stat = jar.stat()
            digest.update(f"{jar}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _class_sharing(name: str, classpath: str) -> tuple[list[str], Path | None, Path]:
    """JVM options that map ``name``'s class archive, or that make it at exit when there is none yet:
    (options, the file being made or None, the archive)."""
    archive = JAVA_CACHE / "cds" / f"{name}-{_jars_stamp(classpath)}.jsa"
    if archive.exists():
        return [QUIET_CDS, f"-XX:SharedArchiveFile={archive}"], None, archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    making = archive.with_name(f"{archive.stem}.{os.getpid()}.{threading.get_ident()}.making")
    return [QUIET_CDS, f"-XX:ArchiveClassesAtExit={making}"], making, archive


def _keep_archive(making: Path | None, archive: Path, succeeded: bool) -> None:
    if making is None:
        return
    if succeeded and making.exists():
        os.replace(making, archive)  # atomic: another run maps a whole archive or none
    else:
        making.unlink(missing_ok=True)


_compiled_lock = threading.Lock()


def java_program(source: Path, classpath: str | None = None) -> list[str]:
    """``-cp`` and the main class that run the single-file program ``source`` (``java/*.java``, no
    package), compiled once for its classpath (the Kafka jars by default) instead of by each launch."""
    classpath = classpath or java_classpath()
    digest = hashlib.sha256(source.read_bytes() + _jars_stamp(classpath).encode()).hexdigest()[:16]
    classes = JAVA_CACHE / "programs" / f"{source.stem}-{digest}"
    with _compiled_lock:
        if not classes.exists():
            classes.parent.mkdir(parents=True, exist_ok=True)
            building = Path(tempfile.mkdtemp(dir=classes.parent, prefix=f".{source.stem}-"))
            javac = Path(os.path.realpath(java_executable())).with_name("javac")
            done = subprocess.run([str(javac), "-d", str(building), "-cp", classpath, str(source)],
                                  capture_output=True, text=True, timeout=180)
            if done.returncode != 0:
                shutil.rmtree(building, ignore_errors=True)
                pytest.fail(f"javac {source.name} failed:\n{done.stderr[-4000:]}", pytrace=False)
            try:
                os.replace(building, classes)
            except OSError:  # another pytest-xdist worker compiled it first
                shutil.rmtree(building, ignore_errors=True)
                if not classes.exists():
                    raise
    return ["-cp", f"{classes}{os.pathsep}{classpath}", source.stem]


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
    sharing, making, archive = _class_sharing(tool, java_classpath())
    cmd = [
        java_executable(),
        *sharing,
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
        _keep_archive(making, archive, False)
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(
            f"{tool} {' '.join(args)} did not finish within {timeout}s\n"
            f"--- stdout ---\n{out[-4000:]}\n--- stderr ---\n{err[-4000:]}",
            pytrace=False,
        )
    _keep_archive(making, archive, result.returncode == 0)
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
