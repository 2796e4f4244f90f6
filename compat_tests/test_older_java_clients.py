"""Older Java clients against pykafkad: 3.9 (what Spark bundles) and 4.1.1 (the previous pin), beside
the pinned 4.4.0 that the other compat tests run.

``make java-deps`` lays out each version's kafka-clients alone in ``<JAVA_CLIENTS_DIR>/clients-<v>``
(compat_tests/java/clients/pom.xml).  ``compat_tests/java/ClientRoundTrip.java`` runs against each:
the admin client creates a topic, an idempotent acks=all producer writes, a group consumer reads
everything and commits, the admin client reads the commit back, and a transactional record reaches a
read_committed consumer.  Each client picks the newest version of every API that both it and the
broker know, so these exercise the older ends of the advertised ranges.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.java_tools import java_executable, java_program

PROGRAM = Path(__file__).resolve().parent / "java" / "ClientRoundTrip.java"
VERSIONS = ("3.9.0", "4.1.1", "4.4.0")
COUNT = 200


def _classpath(version: str) -> str:
    if version == "4.4.0":
        lib = Path(os.environ.get("JAVA_LIB", ""))
    else:
        base = os.environ.get("JAVA_CLIENTS_DIR")
        if not base:
            pytest.fail("env JAVA_CLIENTS_DIR is not set: run `make java-deps` and the tests as `make "
                        "test-python` does (JAVA_CLIENTS_DIR=<repo>/.cache/java)", pytrace=False)
        lib = Path(base) / f"clients-{version}"
    if not (lib / f"kafka-clients-{version}.jar").is_file():
        pytest.fail(f"{lib} holds no kafka-clients-{version}.jar: run `make java-deps`", pytrace=False)
    return str(lib / "*")


@pytest.mark.compat_timeout(240)
@pytest.mark.parametrize("version", VERSIONS)
def test_java_clients_round_trip(broker: BrokerProcess, version: str) -> None:
    topic, group = unique_topic(f"clients-{version}"), unique_topic(f"clients-{version}-group")
    result = subprocess.run(
        [java_executable(), "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
         *java_program(PROGRAM, _classpath(version)), broker.bootstrap, topic, group, str(COUNT)],
        capture_output=True, text=True, timeout=200, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert seen == {"version": version, "produced": str(COUNT), "consumed": str(COUNT),
                    "committed": str(COUNT), "transaction_seen": "true"}, result.stderr[-3000:]
