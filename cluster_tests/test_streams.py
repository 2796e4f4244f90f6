"""Kafka Streams (4.4.0, unchanged) on three brokers: the word count of ``compat_tests/test_streams.py``
with its internal topics (repartition, changelog) replicated three times and exactly_once_v2; one
of its two instances is killed -9 while records flow and the counts stay exact for read_committed
consumers.  The transaction and group coordinators and the partition leaders are spread over the
brokers, so every transactional step crosses brokers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_tests.clients import create_topic
from cluster_tests.conftest import Cluster
from compat_tests.streams_app import CountsReader, WordCountApp, lines, produce_lines, word_counts

PARTITIONS = 3


@pytest.mark.cluster_timeout(300)
def test_word_count_exactly_once_on_a_cluster(cluster: Cluster, tmp_path: Path) -> None:
    cluster.start_brokers({"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
                           "min.insync.replicas": "2", "group.initial.rebalance.delay.ms": "0"})
    create_topic(cluster, "lines", PARTITIONS)
    create_topic(cluster, "counts", PARTITIONS)
    apps = [WordCountApp(cluster.bootstrap, "word-count", "lines", "counts", tmp_path, name, replication_factor=3)
            for name in ("a", "b")]
    counts = CountsReader(cluster.bootstrap, "counts", PARTITIONS)
    try:
        for app in apps:
            app.wait_state("RUNNING")
        first, second = lines(0, 2000), lines(2000, 2000)
        produce_lines(cluster.bootstrap, "lines", first)
        counts.read_until(word_counts(first))
        produce_lines(cluster.bootstrap, "lines", second[:1000])
        apps[1].kill9()
        produce_lines(cluster.bootstrap, "lines", second[1000:])
        expected = word_counts(first + second)
        counts.read_until(expected, timeout=180)
        assert counts.highest == dict(expected), "a count went past the exact one: a record was counted twice"
    finally:
        counts.close()
        for app in apps:
            app.stop()
