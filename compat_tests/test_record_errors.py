"""Per-record errors in Produce responses (KIP-467), measured against Apache Kafka itself.

Timestamps too: a CreateTime record more than `message.timestamp.after.max.ms` (1 hour) ahead of
the broker's clock fails its batch with INVALID_TIMESTAMP, naming it, as on Kafka.

100 records go to a compacted topic in one batch, every tenth without a key.  Kafka answers
INVALID_RECORD with `record_errors` naming those ten by their index in the batch, so clients
fail exactly them with INVALID_RECORD and the other 90 with an error of their own: librdkafka
with _INVALID_DIFFERENT_RECORD, the Java producer with "part of a batch which had one more more
invalid records".  Each client's outcome for every record, and the log left behind, must be
the same on pykafkad as on a real Kafka 4.4.0 broker started by the test (compat_tests'
reference mode).  Before, pykafkad sent no record errors, so both clients failed all 100
records alike.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import confluent_kafka
import pytest

from compat_tests.broker_process import REPO_ROOT, BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.java_tools import java_executable, java_program

COUNT = 100
KEYLESS_EVERY = 10
KEYLESS = [i for i in range(COUNT) if i % KEYLESS_EVERY == 0]
COMPACTED = {"cleanup.policy": "compact"}
RECORD_OUTCOMES_JAVA = REPO_ROOT / "compat_tests" / "java" / "RecordOutcomes.java"

Outcome = tuple[str, ...]


def _librdkafka_outcomes(bootstrap: str, topic: str) -> list[Outcome]:
    """Every record's delivery report: ("OK", offset) or ("ERR", error name)."""
    # A long linger keeps the records together; flush() sends them at once, in one batch.
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 60000,
                                  "message.timeout.ms": 120000})
    p.list_topics(topic, timeout=30)
    outcomes: list[Outcome | None] = [None] * COUNT

    def report(i: int):  # noqa: ANN202 - a delivery callback
        def on_delivery(err: confluent_kafka.KafkaError | None, msg: confluent_kafka.Message) -> None:
            outcomes[i] = ("OK", str(msg.offset())) if err is None else ("ERR", err.name())
        return on_delivery

    for i in range(COUNT):
        key = None if i % KEYLESS_EVERY == 0 else f"k-{i}".encode()
        p.produce(topic, value=f"v-{i}".encode(), key=key, partition=0, on_delivery=report(i))
    assert p.flush(120) == 0, "records still undelivered"
    assert None not in outcomes
    return outcomes  # type: ignore[return-value]


def _java_outcomes(bootstrap: str, topic: str) -> list[Outcome]:
    """Every record's result from the Java producer (idempotent, its default): ("OK", offset) or
    ("ERR", exception class, message)."""
    result = subprocess.run(
        [java_executable(), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
         *java_program(RECORD_OUTCOMES_JAVA), bootstrap, topic, str(COUNT), str(KEYLESS_EVERY)],
        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [int(fields[0]) for fields in lines] == list(range(COUNT)), result.stdout
    return [tuple(fields[1:]) for fields in lines]


def _log_contents(bootstrap: str, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    try:
        tp = confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)
        _, end = c.get_watermark_offsets(tp, timeout=30)
        c.assign([tp])
        got: list[tuple[int, bytes | None, bytes | None]] = []
        while len(got) < end:
            m = c.poll(30)
            assert m is not None, f"only {len(got)} of {end} records read"
            if not m.error():
                got.append((m.offset(), m.key(), m.value()))
        return got
    finally:
        c.close()


def _run(bootstrap: str, topic_prefix: str) -> dict[str, object]:
    """Both clients against one broker; topic names are fixed so the messages can be compared."""
    found: dict[str, object] = {}
    for client, outcomes in (("librdkafka", _librdkafka_outcomes), ("java", _java_outcomes)):
        topic = f"{topic_prefix}-{client}"
        create_topic(bootstrap, topic, config=COMPACTED)
        found[client] = outcomes(bootstrap, topic)
        found[f"{client} log"] = _log_contents(bootstrap, topic)
    return found


@pytest.fixture(scope="module")
def kafka_outcomes(reference_kafka: BrokerProcess, topic_prefix: str) -> dict[str, object]:
    return _run(reference_kafka.bootstrap, topic_prefix)


@pytest.fixture(scope="module")
def topic_prefix() -> str:
    return unique_topic("keyless")


@pytest.mark.compat_timeout(300)
def test_keyless_records_fail_alone_as_on_kafka(tmp_path: Path, topic_prefix: str,
                                                kafka_outcomes: dict[str, object]) -> None:
    broker = BrokerProcess(tmp_path / "logs").start()
    try:
        ours = _run(broker.bootstrap, topic_prefix)
    finally:
        broker.stop()

    librdkafka = ours["librdkafka"]
    assert [i for i, o in enumerate(librdkafka) if o == ("ERR", "INVALID_RECORD")] == KEYLESS
    assert all(o == ("ERR", "_INVALID_DIFFERENT_RECORD") for i, o in enumerate(librdkafka) if i not in KEYLESS)
    java = ours["java"]
    why = f"Compacted topic cannot accept message without key in topic partition {topic_prefix}-java-0"
    assert [i for i, o in enumerate(java) if o == ("ERR", "InvalidRecordException", why)] == KEYLESS, java[:2]
    for key, theirs in kafka_outcomes.items():
        assert ours[key] == theirs, key


def _librdkafka_timestamp_outcomes(bootstrap: str, topic: str, late: set[int]) -> list[Outcome]:
    """10 records in one batch; those in ``late`` stamped two hours ahead of now."""
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 60000,
                                  "message.timeout.ms": 120000})
    p.list_topics(topic, timeout=30)
    outcomes: list[Outcome | None] = [None] * 10
    now = int(time.time() * 1000)

    def report(i: int):  # noqa: ANN202 - a delivery callback
        def on_delivery(err: confluent_kafka.KafkaError | None, msg: confluent_kafka.Message) -> None:
            outcomes[i] = ("OK", str(msg.offset())) if err is None else ("ERR", err.name())
        return on_delivery

    for i in range(10):
        ts = now + 2 * 3_600_000 if i in late else now
        p.produce(topic, value=f"v-{i}".encode(), key=b"k", partition=0, timestamp=ts, on_delivery=report(i))
    assert p.flush(120) == 0, "records still undelivered"
    return outcomes  # type: ignore[return-value]


def _timestamp_run(bootstrap: str, topic: str) -> dict[str, object]:
    create_topic(bootstrap, topic)
    found: dict[str, object] = {"late": _librdkafka_timestamp_outcomes(bootstrap, topic, {3, 7})}
    found["log"] = [(o, k, v) for o, k, v in _log_contents(bootstrap, topic)]
    found["in time"] = _librdkafka_timestamp_outcomes(bootstrap, topic, set())
    return found


@pytest.mark.compat_timeout(180)
def test_records_too_far_ahead_fail_alone_as_on_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    topic = unique_topic("future")
    ours = _timestamp_run(broker.bootstrap, topic)
    theirs = _timestamp_run(reference_kafka.bootstrap, topic)
    assert ours == theirs, f"pykafkad {ours}\nkafka    {theirs}"
    # librdkafka fails the named records with INVALID_RECORD, whatever the batch's error code.
    assert [i for i, o in enumerate(ours["late"]) if o == ("ERR", "INVALID_RECORD")] == [3, 7], ours["late"]
    assert ours["in time"] == [("OK", str(i)) for i in range(10)]
