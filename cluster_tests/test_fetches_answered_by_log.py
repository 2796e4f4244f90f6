"""Parked fetches answered by the log itself (``pykafkad/replica/delayed_fetch.py``): a follower's by
the leader's append it waits for, a consumer's by the high watermark's move over its offset, both
written to the fetcher's socket by the Rust log before the event loop wakes the fetch.  Records
produced one at a time with acks=all, so that both followers and the consumer are parked when the
next comes, reach them that way (the leader counts them); the consumer reads every record in order,
every replica ends with the same log, and after the leader is killed with SIGKILL the new leader
serves every acknowledged record, unchanged."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from cluster_tests.broker_metrics import sample, start_with_metrics, until_replicas_agree
from cluster_tests.clients import create_topic, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool

ANSWERED = "pykafkad_fetches_answered_by_log_total"
RECORDS = 60


def test_parked_fetches_get_each_record_from_the_log(cluster: Cluster) -> None:
    ports = start_with_metrics(cluster, {"metrics.console.enable": "true"})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        state, = create_topic(cluster, "one-by-one", configs={"min.insync.replicas": "3"})
        leader = state["leader"]
        before = {who: sample(ports[leader], ANSWERED, fetcher=who) for who in ("follower", "consumer")}

        consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"reader-{uuid.uuid4()}",
                             "enable.auto.commit": False, "fetch.wait.max.ms": 5000})
        consumer.assign([TopicPartition("one-by-one", 0, 0)])
        read: list[tuple[int, int]] = []
        errors: list[str] = []
        stop = threading.Event()

        def consume() -> None:
            while not stop.is_set() and len(read) < RECORDS:
                msg = consumer.poll(0.2)
                if msg is None:
                    continue
                if msg.error() is not None:
                    errors.append(str(msg.error()))
                    return
                read.append((int(msg.value()), msg.offset()))

        reader = threading.Thread(target=consume, daemon=True)
        reader.start()
        acked: dict[int, tuple[int, int]] = {}
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0,
                             "enable.idempotence": True})
        for value in range(RECORDS):
            def report(err, msg, value=value) -> None:  # noqa: ANN001 - librdkafka's callback signature
                assert err is None, err
                acked[value] = (msg.partition(), msg.offset())
            producer.produce("one-by-one", str(value).rjust(900).encode(), key=str(value).encode(),
                             on_delivery=report)
            assert producer.flush(30) == 0
        assert len(acked) == RECORDS
        reader.join(60)
        stop.set()
        consumer.close()
        assert not errors, errors
        assert read == [(v, acked[v][1]) for v in range(RECORDS)]
        # Two followers and the consumer, parked between records: most of their answers came from the
        # log (some may still come from the event loop, when a fetch was not parked yet).
        answered = {who: sample(ports[leader], ANSWERED, fetcher=who) - before[who] for who in before}
        assert answered["follower"] >= RECORDS // 2, answered
        assert answered["consumer"] >= RECORDS // 4, answered
        until_replicas_agree(ports, "one-by-one", 1)

        cluster.brokers[leader].kill9()
        view.wait_data("/brokers/topics/one-by-one/partitions/0/state",
                       lambda s: s is not None and s["leader"] not in (leader, -1))
        got = read_everything(cluster.bootstrap, "one-by-one", 1, RECORDS)
        assert {v: (p, o) for v, p, o in got} == acked
    finally:
        view.close()


def _partition_1(ports: dict[int, int]) -> dict[int, tuple[int, int, int]]:
    """Each broker's (log start offset, high watermark, log end offset) of busy-1."""
    seen = {}
    for node_id, port in ports.items():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/topics/busy", timeout=10) as answer:
            for p in json.load(answer)["partitions"]:
                if p["partition"] == 1:
                    seen[node_id] = (p["log_start_offset"], p["high_watermark"], p["log_end_offset"])
    return seen


def _until_partition_1_is(ports: dict[int, int], wanted: tuple[int, int, int], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while set((seen := _partition_1(ports)).values()) != {wanted} or len(seen) != len(ports):
        assert time.monotonic() < deadline, f"busy-1 (log start, high watermark, log end) by broker: {seen}"
        time.sleep(0.1)


def test_a_quiet_partitions_news_reaches_followers_while_another_is_busy(cluster: Cluster) -> None:
    """The log answers a follower with the one partition its append brings.  A quiet partition's
    news (its high watermark, which does not wake followers; its log start after DeleteRecords) must
    still reach both followers while the other partition keeps taking records: else the followers'
    high watermarks stay behind, and a DeleteRecords waits for them in vain."""
    ports = start_with_metrics(cluster, {"metrics.console.enable": "true"})
    view = ZooKeeperView(cluster.zk_connect)
    stop = threading.Event()
    errors: list[str] = []

    def keep_busy() -> None:
        # About 100 records/s on partition 0: each follower is parked on its leader when the next
        # comes, so each is answered by the append.
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0})
        while not stop.is_set():
            producer.produce("busy", b"x" * 100, partition=0,
                             on_delivery=lambda err, _msg: err is None or errors.append(str(err)))
            producer.poll(0.01)
        producer.flush(30)

    busy = threading.Thread(target=keep_busy, daemon=True)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "busy",
                                  "--replica-assignment", "1:2:3,1:2:3"])
        for p in (0, 1):
            view.wait_data(f"/brokers/topics/busy/partitions/{p}/state",
                           lambda s: s is not None and sorted(s["isr"]) == [1, 2, 3])
        busy.start()
        for value in range(50):
            produce(cluster.bootstrap, "busy", [value], partition=1)
        _until_partition_1_is(ports, (0, 50, 50))

        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        futures = admin.delete_records([TopicPartition("busy", 1, 30)], operation_timeout=20, request_timeout=40)
        deleted, = (f.result(60) for f in futures.values())
        assert deleted.low_watermark == 30
        _until_partition_1_is(ports, (30, 50, 50))
    finally:
        stop.set()
        if busy.is_alive():
            busy.join(60)
        view.close()
    assert not errors, errors[:3]
