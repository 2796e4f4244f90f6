"""Fixtures for the Spark suite: one pykafkad broker process and one local SparkSession shared
by every test (Spark takes ~20 s to start), with Spark's Kafka connector from local jars.

* `broker`: a pykafkad subprocess (compat_tests/broker_process.py) with auto-create on and two
  partitions per new topic; tests use unique topic names.
* `spark`: local[2], spark.sql.shuffle.partitions=2, no UI, the connector's jars from
  $SPARK_JARS_DIR (default .cache/spark/jars, filled by `make spark-deps`) via spark.jars, so
  Spark resolves nothing over the network.  Missing pyspark, jars or Java skip the suite with
  the command to run.
* Every test body runs under a SIGALRM deadline (default 240 s, or
  @pytest.mark.spark_timeout(seconds)), so a hang becomes a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import LIVE, REPO_ROOT, BrokerProcess

DEFAULT_TEST_TIMEOUT_S = 240.0
BROKER_OVERRIDES = {
    "auto.create.topics.enable": "true",
    "num.partitions": "2",
    "message.max.bytes": "2000000",
}


class SparkTestTimeout(Exception):
    """The test body ran past its deadline."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark_timeout(seconds): deadline for one Spark test body")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("spark_timeout")
    limit = float(marker.args[0]) if marker else DEFAULT_TEST_TIMEOUT_S

    def on_alarm(signum: int, frame: object) -> None:
        raise SparkTestTimeout(f"{item.nodeid} still running after {limit}s")

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


def spark_jars_dir() -> Path:
    return Path(os.environ.get("SPARK_JARS_DIR") or REPO_ROOT / ".cache" / "spark" / "jars")


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    b = BrokerProcess(tmp_path_factory.mktemp("spark-broker") / "logs", BROKER_OVERRIDES, name="spark-broker")
    b.start()
    yield b
    if b.is_alive():
        b.stop()


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="pyspark is not installed: run `make spark-deps`")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: install Java 17 (apt-get install openjdk-17-jre-headless)")
    jars = sorted(str(p) for p in spark_jars_dir().glob("*.jar"))
    if not jars:
        pytest.skip(f"no Kafka connector jars in {spark_jars_dir()}: run `make spark-deps`")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("pykafkad-spark-tests")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.streaming.minBatchesToRetain", "10")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=WARN")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    for q in session.streams.active:
        q.stop()
    session.stop()
