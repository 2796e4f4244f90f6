"""Fixtures for the Spark suite: one pykafkad broker process and one local SparkSession shared
by every test (Spark takes ~20 s to start), with Spark's Kafka connector from local jars.

* `broker`: a pykafkad subprocess (compat_tests/broker_process.py) with auto-create on and two
  partitions per new topic; tests use unique topic names.
* `spark`: local[2], spark.sql.shuffle.partitions=2, no UI, the connector's jars from
  $SPARK_JARS_DIR (default .cache/spark/jars, filled by `make spark-deps`) via spark.jars, so
  Spark resolves nothing over the network.  Missing pyspark, jars or Java fail the suite with
  the command to run.
* Every test body runs under a SIGALRM deadline (default 240 s, or
  @pytest.mark.spark_timeout(seconds)), so a hang becomes a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import REPO_ROOT, BrokerProcess
from compat_tests.deadlines import attach_broker_logs, deadline_hook

DEFAULT_TEST_TIMEOUT_S = 240.0
BROKER_OVERRIDES = {
    "auto.create.topics.enable": "true",
    "num.partitions": "2",
    "message.max.bytes": "2000000",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark_timeout(seconds): deadline for one Spark test body")


pytest_runtest_call = deadline_hook("spark_timeout", DEFAULT_TEST_TIMEOUT_S)
pytest_runtest_makereport = attach_broker_logs


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
    # Missing pieces fail the suite rather than skip it: `make test` installs all of them.
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.fail("pyspark is not installed: run `make spark-deps`", pytrace=False)
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("no Java runtime: install Java 17 (apt-get install openjdk-17-jre-headless)", pytrace=False)
    jars = sorted(str(p) for p in spark_jars_dir().glob("*.jar"))
    if not jars:
        pytest.fail(f"no Kafka connector jars in {spark_jars_dir()}: run `make spark-deps`", pytrace=False)
    from pyspark.sql import SparkSession

    # Spark 4 makes an `artifacts/` directory in the driver JVM's working directory and leaves it
    # behind; the JVM takes this process's working directory when it starts, so start it in a
    # temporary one, not in the repository.
    jvm_cwd = tmp_path_factory.mktemp("spark-driver-cwd")
    here = Path.cwd()
    os.chdir(jvm_cwd)
    try:
        session = _new_session(SparkSession, jars, tmp_path_factory)
    finally:
        os.chdir(here)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    for q in session.streams.active:
        q.stop()
    session.stop()


def _new_session(spark_session: Any, jars: list[str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    return (
        spark_session.builder.master("local[2]")
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
