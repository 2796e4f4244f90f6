"""Pytest hooks shared by the suites that drive real processes: a per-test deadline, and broker logs on failure.

A conftest installs them by assigning the hooks these factories return, e.g.
``pytest_runtest_call = deadline_hook("compat_timeout", 180.0)``.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator

import pytest

from compat_tests.broker_process import LIVE


class TestDeadlineExceeded(Exception):
    """A test body ran past its deadline: a hang became a failure."""

    __test__ = False


def deadline_hook(marker_name: str, default_s: float) -> Callable[[pytest.Item], Iterator[None]]:
    """A ``pytest_runtest_call`` wrapper failing a test body that runs past its deadline (SIGALRM).

    ``@pytest.mark.<marker_name>(seconds)`` sets a test's own deadline.
    """

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
        marker = item.get_closest_marker(marker_name)
        limit = float(marker.args[0]) if marker else default_s

        def on_alarm(signum: int, frame: object) -> None:
            raise TestDeadlineExceeded(f"{item.nodeid} still running after {limit}s")

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    return pytest_runtest_call


@pytest.hookimpl(hookwrapper=True)
def attach_broker_logs(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A ``pytest_runtest_makereport`` wrapper adding every live broker's stderr to a failed test's report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for b in list(LIVE):
            report.sections.append((f"{b.name} stderr", b.stderr_tail(60)))
