"""Kafka Streams' word count (``compat_tests/java/WordCount.java``) as a subprocess, and what a
test checks of it: its lines of input, and the counts it wrote as a read_committed consumer sees
them.  Used on one broker (``test_streams.py``) and on a cluster (``cluster_tests``)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.broker_process import REPO_ROOT
from compat_tests.java_tools import java_classpath, java_executable, stop_java

WORD_COUNT_JAVA = REPO_ROOT / "compat_tests" / "java" / "WordCount.java"
VOCABULARY = [f"w{i}" for i in range(40)]


@functools.cache
def word_count_classes() -> Path:
    """WordCount.java compiled once per test process (launched as a source file, every instance
    compiled it again at start: seconds of CPU each)."""
    classes = Path(tempfile.mkdtemp(prefix="word-count-classes-"))
    atexit.register(shutil.rmtree, classes, True)
    subprocess.run([str(Path(java_executable()).with_name("javac")), "-d", str(classes), "-cp", java_classpath(),
                    str(WORD_COUNT_JAVA)], check=True, capture_output=True, timeout=120)
    return classes


def lines(first: int, count: int) -> list[str]:
    """Lines ``first`` .. ``first + count - 1`` of the input: a few words each, from a small vocabulary."""
    return [" ".join(VOCABULARY[(n * 7 + k * 3) % len(VOCABULARY)] for k in range(1 + n % 4))
            for n in range(first, first + count)]


def word_counts(text: list[str]) -> Counter[str]:
    return Counter(word for line in text for word in line.split())


class WordCountApp:
    """One instance of the Streams application, its stdout watched for state changes."""

    def __init__(self, bootstrap: str, app_id: str, input_topic: str, output_topic: str, work: Path,
                 name: str, replication_factor: int = 1) -> None:
        self.name = name
        state_dir = work / f"state-{name}"
        state_dir.mkdir(parents=True, exist_ok=True)
        self.stderr_path = work / f"{name}.stderr.log"
        self.states: list[str] = []
        self.errors: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            [java_executable(), "-Xmx384m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
             f"{word_count_classes()}{os.pathsep}{java_classpath()}", "WordCount", bootstrap, app_id, input_topic,
             output_topic, str(state_dir), str(replication_factor)],
            stdout=subprocess.PIPE, stderr=self.stderr_path.open("w"), stdin=subprocess.DEVNULL, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                if line.startswith("STATE "):
                    self.states.append(line.split()[1])
                elif line.startswith("ERROR "):
                    self.errors.append(line.strip())
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_state(self, state: str, timeout: float = 120) -> None:
        with self._changed:
            ok = self._changed.wait_for(lambda: (self.states and self.states[-1] == state) or self.errors
                                        or self.proc.poll() is not None, timeout)
        assert ok and not self.errors and self.states[-1:] == [state], (
            f"{self.name}: states {self.states}, errors {self.errors}\n{self.stderr_tail()}")

    def stderr_tail(self) -> str:
        return self.stderr_path.read_text()[-4000:] if self.stderr_path.exists() else ""

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(30)

    def stop(self) -> None:
        stop_java(self.proc)


def produce_lines(bootstrap: str, topic: str, text: list[str], **settings: object) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 5, **settings})
    failures: list[str] = []
    for n, line in enumerate(text):
        producer.produce(topic, line.encode(), key=str(n).encode(),
                         on_delivery=lambda err, _msg: failures.append(str(err)) if err else None)
        producer.poll(0)
    assert producer.flush(60) == 0 and not failures, failures[:5]


class CountsReader:
    """The latest count of each word in the output topic, as a read_committed consumer sees it, and
    the highest count ever seen (a count above the expected one is a record processed twice)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.latest: dict[str, int] = {}
        self.highest: dict[str, int] = {}
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"counts-{topic}",
                                   "isolation.level": "read_committed", "enable.auto.commit": False,
                                   "auto.offset.reset": "earliest"})
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])

    def read_until(self, expected: Counter[str], timeout: float = 120) -> None:
        """Poll until every word's latest count is the expected one (or fail with what differs)."""
        import time

        deadline = time.monotonic() + timeout
        while any(self.latest.get(w) != c for w, c in expected.items()):
            assert time.monotonic() < deadline, {
                w: (self.latest.get(w), c) for w, c in expected.items() if self.latest.get(w) != c}
            msg = self._consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            word, count = msg.key().decode(), int.from_bytes(msg.value(), "big", signed=True)
            self.latest[word] = count
            self.highest[word] = max(count, self.highest.get(word, 0))

    def close(self) -> None:
        self._consumer.close()
