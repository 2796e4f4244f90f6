"""kafka-python's own integration tests against pykafkad: the allow-list must hold.

Runs ``python -m compat_tests.suites.kafka_python.run --broker pykafkad`` (which fetches the
kafka-python sdist with pip the first time) and asserts it exits 0, i.e. every test in
``compat_tests/suites/kafka_python/allowlist.txt`` passed.  Skipped unless env PYKAFKAD_SUITES=1
is set, for now: it needs PyPI the first time and takes about a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from compat_tests.broker_process import REPO_ROOT

pytestmark = pytest.mark.skipif(os.environ.get("PYKAFKAD_SUITES") != "1",
                                reason="set PYKAFKAD_SUITES=1 to run kafka-python's own integration tests")


@pytest.mark.compat_timeout(900)
def test_kafka_python_suite_allowlist_holds() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compat_tests.suites.kafka_python.run", "--broker", "pykafkad"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-60:])
    assert done.returncode == 0, f"run.py exited {done.returncode}:\n{tail}"
