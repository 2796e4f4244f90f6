"""Many partitions: a broker with 5,000 partitions starts, serves, and stays within sensible
memory and file-handle use.

Five topics of 1,000 partitions are created with one CreateTopics request; the broker is then
killed with SIGKILL (so every partition goes through crash recovery) and started again.
Produce and fetch work on a sample of partitions across all topics, and the process's open
file descriptors (segment and index files are opened lazily through a bounded cache) and
resident memory are reported and held to generous bounds.
"""

from __future__ import annotations

import re
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.clients import CLIENT_TIMEOUT_S, unique_topic, wait_for_topic
from compat_tests.storage_support import proc_stats, wait_for

TOPICS = 5
PER_TOPIC = 1000
MAX_FDS = 1000
MAX_RSS_MB = 1024


def _sample(topics: list[str]) -> list[tuple[str, int]]:
    return [(t, p) for t in topics for p in (0, 1, 499, 998, 999, 250, 750)]


def _produce_and_fetch(bootstrap: str, sample: list[tuple[str, int]], tag: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    acked: dict[tuple[str, int], int] = {}
    errors: list[Any] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked[(msg.topic(), msg.partition())] = msg.offset()

    for t, p in sample:
        producer.produce(t, value=f"{tag}-{t}-{p}".encode(), partition=p, on_delivery=on_delivery)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0 and not errors, errors[:3]
    assert len(acked) == len(sample)

    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"unused-{tag}",
                                         "enable.auto.commit": False})
    got: dict[tuple[str, int], bytes] = {}
    try:
        consumer.assign([confluent_kafka.TopicPartition(t, p, acked[(t, p)]) for t, p in sample])

        def all_read() -> bool:
            for m in consumer.consume(num_messages=500, timeout=0.5):
                if m.error() is None:
                    got[(m.topic(), m.partition())] = m.value()
            return len(got) == len(sample)

        wait_for("every sampled partition is fetched", all_read, timeout=60, interval=0)
    finally:
        consumer.close()
    assert got == {(t, p): f"{tag}-{t}-{p}".encode() for t, p in sample}


@pytest.mark.compat_timeout(240)
def test_five_thousand_partitions(broker_factory: Any) -> None:
    b = broker_factory("many", {"auto.create.topics.enable": "false", "offsets.topic.num.partitions": "1"})
    topics = [unique_topic(f"many{i}") for i in range(TOPICS)]
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    futures = admin.create_topics([NewTopic(t, PER_TOPIC, 1) for t in topics], request_timeout=120,
                                  operation_timeout=120)
    for f in futures.values():
        f.result(timeout=120)
    for t in topics:
        wait_for_topic(b.bootstrap, t, PER_TOPIC, timeout=60)
    sample = _sample(topics)
    _produce_and_fetch(b.bootstrap, sample, "before")
    assert b.proc is not None
    fds_created, rss_created = proc_stats(b.proc.pid)

    mark = b.stderr_size()
    b.kill9()
    b.start(timeout=120)
    log = b.stderr_text()[mark:]
    opened = re.search(r"opened (\d+) partition logs", log)
    started = re.search(r"pykafkad started in ([\d.]+)s", log)
    assert opened and int(opened.group(1)) >= TOPICS * PER_TOPIC, log[-2000:]
    assert b.proc is not None
    fds_started, rss_started = proc_stats(b.proc.pid)
    for t in topics:
        wait_for_topic(b.bootstrap, t, PER_TOPIC, timeout=60)
    _produce_and_fetch(b.bootstrap, sample, "after")
    fds_served, rss_served = proc_stats(b.proc.pid)

    report = (f"5000 partitions: after create {fds_created} fds / {rss_created // 1024} MB RSS; "
              f"after kill -9 restart ({started.group(0) if started else '?'}) {fds_started} fds / "
              f"{rss_started // 1024} MB; after serving {len(sample)} partitions {fds_served} fds / "
              f"{rss_served // 1024} MB")
    print(report)
    for fds in (fds_created, fds_started, fds_served):
        assert fds < MAX_FDS, report
    for rss in (rss_created, rss_started, rss_served):
        assert rss < MAX_RSS_MB * 1024, report
    b.stop()  # and it shuts down cleanly, closing every log
