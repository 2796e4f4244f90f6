"""kazoo (pykafkad's ZooKeeper client) keeps its INFO lines out of the broker's log unless asked
for with ``log4j.logger.kazoo=INFO``, as Kafka's log4j.properties keeps its ZooKeeper client
quiet: a broker on ZooKeeper logs its own start-up, not the client's connection chatter."""

from __future__ import annotations

import re
import time

from cluster_tests.conftest import Cluster

# A line of the broker's text log written by one of kazoo's loggers at INFO.
KAZOO_INFO = re.compile(r"^\S+ \S+ INFO kazoo[.:]", re.MULTILINE)


def _started_log(cluster: Cluster, node_id: int, overrides: dict[str, str] | None = None) -> str:
    broker = cluster.start_broker(node_id, overrides)
    # Started means connected to ZooKeeper and registered: kazoo has said what it says by then.
    deadline = time.monotonic() + 60
    while "pykafkad started" not in (text := broker.stderr_text()):
        assert time.monotonic() < deadline, text
        time.sleep(0.1)
    return text


def test_no_kazoo_info_lines_by_default(cluster: Cluster) -> None:
    text = _started_log(cluster, 1)
    assert not KAZOO_INFO.search(text), text


def test_kazoo_info_lines_when_asked_for(cluster: Cluster) -> None:
    text = _started_log(cluster, 1, {"log4j.logger.kazoo": "INFO"})
    assert KAZOO_INFO.search(text), text
