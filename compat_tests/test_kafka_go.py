"""segmentio/kafka-go, a Go client, against pykafkad and side by side against Kafka 4.4.0.

Its ``Client.Fetch`` sends Fetch v11 without a fetch session (session id -1, epoch -1, Kafka's
FINAL_EPOCH).  Kafka serves that as a full fetch; pykafkad answered FETCH_SESSION_ID_NOT_FOUND
with no topics, and the client reported that the topic it had just produced to did not exist.
The program (compat_tests/kafka_go, built with ``go build`` from the Go module proxy) produces
three records with ``Client.Produce`` and prints what ``Client.Fetch`` reads back.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.raw_kafka import RawConnection

PROGRAM_DIR = Path(__file__).parent / "kafka_go"
BUILD_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def kafka_go(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no Go toolchain (go) on this machine")
    binary = tmp_path_factory.mktemp("kafka-go") / "kafka_go"
    built = subprocess.run([go, "build", "-o", str(binary), "."], cwd=PROGRAM_DIR, capture_output=True,
                           text=True, timeout=BUILD_TIMEOUT_S, check=False)
    assert built.returncode == 0, built.stderr
    return binary


def _produce_and_fetch(binary: Path, broker: BrokerProcess) -> list[str]:
    topic = unique_topic("kafka-go")
    with RawConnection(broker.port) as conn:
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
    ran = subprocess.run([str(binary), f"127.0.0.1:{broker.port}", topic], capture_output=True, text=True,
                         timeout=120, check=False)
    assert ran.returncode == 0, f"{broker.name}: {ran.stderr}"
    return ran.stdout.split()


@pytest.mark.compat_timeout(900)
def test_kafka_go_fetches_what_it_produced_as_from_kafka(kafka_go: Path, broker: BrokerProcess,
                                                          reference_kafka: BrokerProcess) -> None:
    assert _produce_and_fetch(kafka_go, broker) == _produce_and_fetch(kafka_go, reference_kafka) == \
        ["one", "two", "three"]
