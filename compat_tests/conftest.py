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

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compat_tests.broker_process import REFERENCE_KAFKA_MODULE, BrokerProcess
from compat_tests.deadlines import attach_broker_logs, deadline_hook

SHARED_OVERRIDES = {
    "message.max.bytes": "2000000",
    "socket.request.max.bytes": "10485760",
    "auto.create.topics.enable": "false",
    "num.partitions": "1",
}
DEFAULT_TEST_TIMEOUT_S = 180.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "compat_timeout(seconds): deadline for one compat test body")
    # kafka-python 3.0 loads its protocol schemas with a deprecated importlib.resources API.
    config.addinivalue_line("filterwarnings", "ignore:.*is deprecated. Use files:DeprecationWarning")


pytest_runtest_call = deadline_hook("compat_timeout", DEFAULT_TEST_TIMEOUT_S)
pytest_runtest_makereport = attach_broker_logs


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


# Static settings of the reference Kafka, chosen so that describing configs shows synonyms in
# hours, minutes and ms; a test comparing pykafkad with it starts pykafkad with the same ones.
REFERENCE_OVERRIDES = {
    "log.retention.minutes": "6000",
    "log.roll.hours": "48",
    "log.cleaner.delete.retention.ms": "3600000",
    "message.max.bytes": "2000000",
    "num.partitions": "1",
    # A consumer-protocol group's target assignment on the heartbeat that needs it, not batched by
    # the clock (test_consumer_group_heartbeat_kafka compares the answers heartbeat by heartbeat).
    "group.consumer.assignment.interval.ms": "0",
    # A single broker can hold the share coordinator's __share_group_state (share groups' partitions
    # become assignable only once their state is written there).
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}


@pytest.fixture(scope="session")
def reference_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A real Apache Kafka 4.4.0 broker (single-node KRaft, from JAVA_LIB) for tests that compare
    pykafkad's answers with Kafka's own; started once, on first use."""
    kafka = BrokerProcess(tmp_path_factory.mktemp("reference-kafka") / "logs", REFERENCE_OVERRIDES,
                          name="reference-kafka", module=REFERENCE_KAFKA_MODULE)
    kafka.start()
    yield kafka
    kafka.close()


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
