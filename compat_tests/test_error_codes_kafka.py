"""wire's error codes against the pinned kafka-clients jar: the same codes under the same names.

``compat_tests/java/ErrorCodes.java`` lists ``org.apache.kafka.common.protocol.Errors`` of the jar in
JAVA_LIB (Java runs the source file directly).  A code Kafka added and wire lacks would otherwise
reach a client of pykafkad only as a bare number in a log line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from compat_tests.java_tools import java_executable, java_program
from wire.error_codes import ErrorCode

PROGRAM = Path(__file__).resolve().parent / "java" / "ErrorCodes.java"


def test_error_codes_match_kafka_clients() -> None:
    out = subprocess.run([java_executable(), *java_program(PROGRAM)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    kafka = {int(code): name for code, name in (line.split() for line in out.splitlines())}
    assert len(kafka) > 130
    assert {e.value: e.name for e in ErrorCode} == kafka
