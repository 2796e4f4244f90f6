"""Finding the kafka-clients jar and reading the message definitions out of it.

Search order: an explicit path, ``$JAVA_LIB/kafka-clients-<v>.jar``, the local Maven repository
(``~/.m2``), and finally ``mvn -q dependency:get`` to download it into that repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

_DEFINITIONS_DIR = "common/message/"


class JarNotFound(FileNotFoundError):
    """The kafka-clients jar is nowhere to be found and Maven could not fetch it."""


def maven_jar_path(kafka_version: str) -> Path:
    """Where Maven keeps kafka-clients ``kafka_version`` in the local repository."""
    return (
        Path.home()
        / ".m2/repository/org/apache/kafka/kafka-clients"
        / kafka_version
        / f"kafka-clients-{kafka_version}.jar"
    )


def find_jar(
    kafka_version: str, explicit: str | os.PathLike[str] | None = None, download: bool = True
) -> Path:
    """Return the path of the kafka-clients jar, downloading it with Maven if needed and allowed."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise JarNotFound(f"no jar at {path}")
        return path
    candidates = []
    java_lib = os.environ.get("JAVA_LIB")
    if java_lib:
        candidates.append(Path(java_lib) / f"kafka-clients-{kafka_version}.jar")
    candidates.append(maven_jar_path(kafka_version))
    for path in candidates:
        if path.is_file():
            return path
    if download and shutil.which("mvn"):
        subprocess.run(
            ["mvn", "-q", "dependency:get", f"-Dartifact=org.apache.kafka:kafka-clients:{kafka_version}"],
            check=True,
        )
        if maven_jar_path(kafka_version).is_file():
            return maven_jar_path(kafka_version)
    raise JarNotFound(
        f"kafka-clients-{kafka_version}.jar not found (looked in {', '.join(map(str, candidates))})"
    )


def read_definitions(jar: Path) -> Iterator[tuple[str, str]]:
    """Yield ``(file name, text)`` for every JSON message definition in the jar, sorted by name."""
    with zipfile.ZipFile(jar) as archive:
        names = sorted(
            n for n in archive.namelist() if n.startswith(_DEFINITIONS_DIR) and n.endswith(".json")
        )
        for name in names:
            yield name[len(_DEFINITIONS_DIR) :], archive.read(name).decode("utf-8")
