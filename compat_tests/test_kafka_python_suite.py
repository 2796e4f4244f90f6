"""kafka-python's own integration tests against pykafkad: the allow-list must hold.

Runs ``python -m compat_tests.suites.kafka_python.run --broker pykafkad`` (which fetches the
kafka-python sdist with pip the first time) and asserts it exits 0, i.e. every test in
``compat_tests/suites/kafka_python/allowlist.txt`` passed.  It fetches the sdist from PyPI the first
time (into .cache/suites/) and takes about half a minute.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.broker_process import REPO_ROOT


@pytest.mark.compat_timeout(900)
def test_kafka_python_suite_allowlist_holds() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compat_tests.suites.kafka_python.run", "--broker", "pykafkad"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )
    # Long enough for a failed test's captured DEBUG log (run.py), which says what the client saw.
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-400:])
    assert done.returncode == 0, f"run.py exited {done.returncode}:\n{tail}"


def test_the_runner_finds_kafkas_jars_by_their_versioned_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--broker kafka` looks for the stamp `make java-deps` writes (.done-<version>), not the old
    unversioned one."""
    from compat_tests.suites.kafka_python.run import SuiteError, make_broker

    lib = tmp_path / "lib"
    lib.mkdir()
    monkeypatch.setenv("JAVA_LIB", str(lib))
    with pytest.raises(SuiteError, match="no Kafka jars"):
        make_broker("kafka", tmp_path / "run", {})
    (lib / ".done-4.4.0").touch()
    assert make_broker("kafka", tmp_path / "run", {}) is not None
