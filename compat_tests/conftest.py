"""Fixtures for the compat suite: pykafkad brokers as subprocesses, plus a hang guard.

* `broker`: one broker shared by the whole session (tests use unique topic names),
  with message.max.bytes raised to 2000000 so 1 MB records fit.
* `broker_factory`: start extra brokers with their own overrides (auto-create on or
  off, small limits, durability runs); each is stopped at the end of the test.
* Every test body runs under a SIGALRM deadline (default 180 s, or
  @pytest.mark.compat_timeout(seconds)), so a hang becomes a failure.
* When a test fails, the stderr of every broker still running is attached to its report.
"""

from __future__ import annotations

import signal
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compat_tests.broker_process import LIVE, BrokerProcess

SHARED_OVERRIDES = {
    "message.max.bytes": "2000000",
    "socket.request.max.bytes": "10485760",
    "auto.create.topics.enable": "false",
    "num.partitions": "1",
}
DEFAULT_TEST_TIMEOUT_S = 180.0


class CompatTimeout(Exception):
    """The test body ran past its deadline."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "compat_timeout(seconds): deadline for one compat test body")
    # kafka-python 3.0 loads its protocol schemas with a deprecated importlib.resources API.
    config.addinivalue_line("filterwarnings", "ignore:.*is deprecated. Use files:DeprecationWarning")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("compat_timeout")
    limit = float(marker.args[0]) if marker else DEFAULT_TEST_TIMEOUT_S

    def on_alarm(signum: int, frame: object) -> None:
        raise CompatTimeout(f"{item.nodeid} still running after {limit}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for b in list(LIVE):
            report.sections.append((f"{b.name} stderr", b.stderr_tail(60)))


@pytest.fixture(scope="session")
def _shared_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    b = BrokerProcess(tmp_path_factory.mktemp("shared") / "logs", SHARED_OVERRIDES, name="shared-broker")
    b.start()
    yield b
    if b.is_alive():
        b.stop()


@pytest.fixture
def broker(_shared_broker: BrokerProcess) -> BrokerProcess:
    """The shared broker; restarted (with a warning) if an earlier test left it dead."""
    if not _shared_broker.is_alive():
        warnings.warn(
            f"shared broker was dead before this test; restarting\n{_shared_broker.stderr_tail(30)}",
            stacklevel=1,
        )
        _shared_broker.kill9()
        _shared_broker.start()
    return _shared_broker


BrokerFactory = Callable[..., BrokerProcess]


@pytest.fixture
def broker_factory(tmp_path: Path) -> Iterator[BrokerFactory]:
    """Start dedicated brokers: factory("name", {"auto.create.topics.enable": "true"})."""
    started: list[BrokerProcess] = []

    def make(name: str = "broker", overrides: dict[str, str] | None = None) -> BrokerProcess:
        b = BrokerProcess(tmp_path / f"{name}-{len(started)}" / "logs", overrides, name=name)
        started.append(b)
        return b.start()

    yield make
    for b in started:
        b.close()
