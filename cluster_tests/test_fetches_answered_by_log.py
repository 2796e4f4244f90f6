"""Parked fetches answered by the log itself (``pykafkad/replica/delayed_fetch.py``): a follower's by
the leader's append it waits for, a consumer's by the high watermark's move over its offset, both
written to the fetcher's socket by the Rust log before the event loop wakes the fetch.  Records
produced one at a time with acks=all, so that both followers and the consumer are parked when the
next comes, reach them that way (the leader counts them); the consumer reads every record in order,
every replica ends with the same log, and after the leader is killed with SIGKILL the new leader
serves every acknowledged record, unchanged."""

from __future__ import annotations

import threading
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from cluster_tests.broker_metrics import sample, start_with_metrics, until_replicas_agree
from cluster_tests.clients import create_topic, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView

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
