"""Kafka Streams (4.4.0, unchanged) runs on pykafkad: a word count with a repartition topic and a
state store's changelog, processing.guarantee=exactly_once_v2, two instances sharing its tasks.
One instance is killed -9 while records flow; the other takes over its tasks, restores their
state from the changelog, and the counts a read_committed consumer sees are exact.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic
from compat_tests.streams_app import CountsReader, WordCountApp, lines, produce_lines, word_counts

PARTITIONS = 2


@pytest.mark.compat_timeout(300)
def test_word_count_exactly_once_through_an_instance_kill(broker: BrokerProcess, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    source, sink, app_id = f"lines-{suffix}", f"counts-{suffix}", f"word-count-{suffix}"
    create_topic(broker.bootstrap, source, PARTITIONS)
    create_topic(broker.bootstrap, sink, PARTITIONS)
    apps = [WordCountApp(broker.bootstrap, app_id, source, sink, tmp_path, name) for name in ("a", "b")]
    counts = CountsReader(broker.bootstrap, sink, PARTITIONS)
    try:
        for app in apps:
            app.wait_state("RUNNING")
        first, second = lines(0, 2000), lines(2000, 2000)
        produce_lines(broker.bootstrap, source, first)
        counts.read_until(word_counts(first))

        # While the second half flows, one instance dies; the other finishes its work.
        produce_lines(broker.bootstrap, source, second[:1000])
        apps[0].kill9()
        produce_lines(broker.bootstrap, source, second[1000:])
        expected = word_counts(first + second)
        counts.read_until(expected, timeout=180)
        assert counts.highest == dict(expected), "a count went past the exact one: a record was counted twice"
        assert apps[1].proc.poll() is None, apps[1].stderr_tail()
    finally:
        counts.close()
        for app in apps:
            app.stop()
