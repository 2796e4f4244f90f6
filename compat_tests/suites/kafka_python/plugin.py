"""Pytest plugin the runner loads into the kafka-python suite (``-p compat_tests.suites.kafka_python.plugin``).

* Records each test's final outcome (passed, failed, error, skipped) and the first failure's
  message by node id into the JSON file named by ``--suite-outcomes``
  (``{"outcomes": {...}, "messages": {...}}``), for the runner to compare with the allow-list.
* Fails a test body that runs past its deadline (SIGALRM, ``SUITE_TEST_TIMEOUT_S``, default 180 s),
  standing in for the ``--timeout=300`` the suite's own configuration asks of pytest-timeout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compat_tests.deadlines import deadline_hook

DEFAULT_TEST_TIMEOUT_S = 180.0

pytest_runtest_call = deadline_hook("suite_timeout", float(os.environ.get("SUITE_TEST_TIMEOUT_S",
                                                                          DEFAULT_TEST_TIMEOUT_S)))

_outcomes: dict[str, str] = {}
_messages: dict[str, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--suite-outcomes", default=None, help="write {node id: outcome} as JSON to this file")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "suite_timeout(seconds): deadline for one test body")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The worst phase wins: a failed setup or teardown is an error, a failed call a failure."""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = getattr(crash, "message", None) or (str(report.longrepr).strip().splitlines() or [""])[-1]
        _messages.setdefault(report.nodeid, f"{report.when}: {message}"[:500])
    if report.when == "call":
        if report.failed:
            _outcomes[report.nodeid] = "failed"
        elif report.skipped:
            _outcomes[report.nodeid] = "skipped"
        else:
            _outcomes.setdefault(report.nodeid, "passed")
    elif report.failed:
        if _outcomes.get(report.nodeid) != "failed":
            _outcomes[report.nodeid] = "error"
    elif report.skipped:
        _outcomes[report.nodeid] = "skipped"


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = session.config.getoption("--suite-outcomes")
    if target:
        document = {"outcomes": _outcomes, "messages": _messages}
        Path(target).write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
