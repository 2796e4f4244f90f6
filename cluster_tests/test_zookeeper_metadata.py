"""Brokers keep the cluster's metadata in ZooKeeper, in Kafka's znodes, and read it back after a crash.

Real brokers against a real ZooKeeper, driven with Kafka's own tools, ZooKeeper's shell and stock
clients: registration under /brokers/ids, the controller election, topics and partition states
under /brokers/topics, a restart that finds its topics in ZooKeeper (not in a local file), a second
broker that sees the first one's topics and takes over as controller when it dies, and a broker
that cannot reach ZooKeeper failing with one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from cluster_tests.clients import produce
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from cluster_tests.zookeeper_server import zk_cli
from compat_tests.broker_process import REPO_ROOT, SERVER_PROPERTIES, free_port
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

RECORDS = 200
INIT_PRODUCER_ID = 22
IDEMPOTENT = {"enable.idempotence": True, "linger.ms": 5}
# A new group's first join is not held back Kafka's default 3 s.
NO_JOIN_DELAY = {"group.initial.rebalance.delay.ms": "0"}


def _consume_all(bootstrap: str, topic: str, count: int) -> dict[int, tuple[int, int]]:
    """Read ``count`` values as a member of a new consumer group (subscribe, not assign: the group
    coordinator is part of what is read back); returns the (partition, offset) of each value."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: dict[int, tuple[int, int]] = {}
    try:
        while len(got) < count:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got[int(msg.value())] = (msg.partition(), msg.offset())
    finally:
        consumer.close()
    return got


def _controller_in_metadata(bootstrap: str) -> tuple[int, list[int]]:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30)
    return metadata.controller_id, sorted(metadata.brokers)


def _wait_metadata(bootstrap: str, controller: int, brokers: list[int], timeout: float = 30) -> None:
    """Wait until the broker's Metadata answers name ``controller`` and list ``brokers``: a broker
    learns of a change through its own ZooKeeper watch, a moment after the test's watch fired."""
    deadline = time.monotonic() + timeout
    seen = _controller_in_metadata(bootstrap)
    while seen != (controller, brokers) and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = _controller_in_metadata(bootstrap)
    assert seen == (controller, brokers)


@pytest.mark.cluster_timeout(240)
def test_a_broker_keeps_its_cluster_in_zookeeper_and_reads_it_back_after_kill9(cluster: Cluster) -> None:
    broker = cluster.start_broker(1, NO_JOIN_DELAY)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        # Registration and controller, as an operator sees them with ZooKeeper's shell.
        assert zk_cli(cluster.zk_connect, "ls", "/brokers/ids") == "[1]"
        registration = json.loads(zk_cli(cluster.zk_connect, "get", "/brokers/ids/1"))
        assert registration["endpoints"] == [f"PLAINTEXT://{broker.bootstrap}"]
        assert (registration["host"], registration["port"], registration["version"]) == ("127.0.0.1", broker.port, 5)
        assert json.loads(zk_cli(cluster.zk_connect, "get", "/controller"))["brokerid"] == 1
        assert int(zk_cli(cluster.zk_connect, "get", "/controller_epoch")) >= 1

        run_tool("kafka-topics", ["--bootstrap-server", broker.bootstrap, "--create", "--topic", "kept",
                                  "--partitions", "3", "--replication-factor", "1",
                                  "--config", "retention.ms=86400000"])
        state = json.loads(zk_cli(cluster.zk_connect, "get", "/brokers/topics/kept/partitions/0/state"))
        assert (state["leader"], state["isr"], state["leader_epoch"]) == (1, [1], 0)
        assignment = view.json("/brokers/topics/kept")
        assert assignment["partitions"] == {"0": [1], "1": [1], "2": [1]}
        assert view.json("/config/topics/kept")["config"] == {"retention.ms": "86400000"}
        described = run_tool("kafka-topics", ["--bootstrap-server", broker.bootstrap, "--describe",
                                              "--topic", "kept"]).stdout
        assert "TopicId: " + assignment["topic_id"] in described
        assert "Leader: 1\tReplicas: 1\tIsr: 1" in described

        acked = produce(broker.bootstrap, "kept", list(range(RECORDS)), **IDEMPOTENT)
        assert sorted(acked) == list(range(RECORDS))
        broker.kill9()
        view.wait_children("/brokers/ids", lambda ids: ids == [])
        view.wait_data("/controller", lambda c: c is None)
        # Nothing about the cluster is kept beside the logs: the restart reads ZooKeeper.
        assert not (broker.log_dir / "pykafkad-cluster-metadata.json").exists()

        broker.start()
        assert zk_cli(cluster.zk_connect, "ls", "/brokers/ids") == "[1]"
        got = _consume_all(broker.bootstrap, "kept", RECORDS)
        assert got == acked
        described = run_tool("kafka-topics", ["--bootstrap-server", broker.bootstrap, "--describe",
                                              "--topic", "kept"]).stdout
        assert "TopicId: " + assignment["topic_id"] in described
        assert "retention.ms=86400000" in described
    finally:
        view.close()


def _state(view: ZooKeeperView, topic: str, partition: int) -> dict:
    return view.json(f"/brokers/topics/{topic}/partitions/{partition}/state")


@pytest.mark.cluster_timeout(240)
def test_two_brokers_share_topics_and_the_survivor_becomes_controller(cluster: Cluster) -> None:
    first = cluster.start_broker(1, NO_JOIN_DELAY)
    second = cluster.start_broker(2, NO_JOIN_DELAY)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        for b in (first, second):
            _wait_metadata(b.bootstrap, 1, [1, 2])

        run_tool("kafka-topics", ["--bootstrap-server", first.bootstrap, "--create", "--topic", "shared",
                                  "--partitions", "2", "--replication-factor", "1"])
        # Placed as Kafka places them: round robin over the live brokers.
        placement = view.json("/brokers/topics/shared")["partitions"]
        assert sorted(placement.values()) == [[1], [2]]
        on_first = int(next(p for p, replicas in placement.items() if replicas == [1]))
        # The second broker knows the topic from ZooKeeper, creates the log of its own partition,
        # and clients that only know the second broker reach both leaders through it.
        acked = produce(second.bootstrap, "shared", list(range(RECORDS)), **IDEMPOTENT)
        assert sorted(acked) == list(range(RECORDS))
        assert {p for p, _ in acked.values()} == {0, 1}
        got = _consume_all(second.bootstrap, "shared", RECORDS)
        assert got == acked
        # A config change made through one broker reaches the other (its ZooKeeper watch).
        run_tool("kafka-configs", ["--bootstrap-server", first.bootstrap, "--alter", "--entity-type", "topics",
                                   "--entity-name", "shared", "--add-config", "retention.ms=123456789"])
        described = run_tool("kafka-configs", ["--bootstrap-server", second.bootstrap, "--describe",
                                               "--entity-type", "topics", "--entity-name", "shared"]).stdout
        assert "retention.ms=123456789" in described
        # Producer id blocks are claimed by compare-and-set: two brokers never hand out the same id.
        ids = set()
        for b in (first, second):
            with RawConnection(b.port) as conn:
                answer = conn.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                            "producer_id": -1, "producer_epoch": -1})
                assert answer["error_code"] == 0
                ids.add(answer["producer_id"])
        assert len(ids) == 2

        first.kill9()
        view.wait_data("/controller", lambda c: c is not None and c["brokerid"] == 2)
        view.wait_children("/brokers/ids", lambda ids: ids == ["2"])
        _wait_metadata(second.bootstrap, 2, [2])
        # The new controller takes the dead broker's partition offline (no other replica to lead).
        offline = view.wait_data(f"/brokers/topics/shared/partitions/{on_first}/state", lambda s: s["leader"] == -1)
        assert (offline["leader_epoch"], offline["isr"]) == (1, [1])
        assert _state(view, "shared", 1 - on_first)["leader"] == 2
        described = run_tool("kafka-topics", ["--bootstrap-server", second.bootstrap, "--describe",
                                              "--topic", "shared"]).stdout
        assert f"Partition: {on_first}\tLeader: none" in described, described
        refused = run_tool("kafka-topics", ["--bootstrap-server", second.bootstrap, "--create", "--topic", "rf2",
                                            "--partitions", "1", "--replication-factor", "2"], check=False)
        assert refused.returncode != 0
        assert "replication factor of 2 cannot be reached because only 1 broker(s) are registered" in refused.stdout
        run_tool("kafka-topics", ["--bootstrap-server", second.bootstrap, "--create", "--topic", "after",
                                  "--partitions", "1", "--replication-factor", "1"])
        assert view.json("/brokers/topics/after/partitions/0/state")["leader"] == 2
        assert produce(second.bootstrap, "after", list(range(10)), **IDEMPOTENT) == {i: (0, i) for i in range(10)}

        # The first broker comes back as a broker, not as controller, and leads its partition again
        # in a new epoch.
        first.start()
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        _wait_metadata(first.bootstrap, 2, [1, 2])
        back = view.wait_data(f"/brokers/topics/shared/partitions/{on_first}/state", lambda s: s["leader"] == 1)
        assert (back["leader_epoch"], back["isr"]) == (2, [1])
        # With both alive, a topic of replication factor 2 is in sync on both.
        run_tool("kafka-topics", ["--bootstrap-server", second.bootstrap, "--create", "--topic", "rf2",
                                  "--partitions", "1", "--replication-factor", "2"])
        assert sorted(_state(view, "rf2", 0)["isr"]) == [1, 2]
        got = _consume_all(second.bootstrap, "shared", RECORDS)
        assert got == acked
    finally:
        view.close()


def test_a_broker_that_cannot_reach_zookeeper_says_so_in_one_line(tmp_path) -> None:
    nobody = free_port()
    # What an earlier run left: a failed start must not overwrite it.
    (tmp_path / "logs").mkdir()
    checkpoint = tmp_path / "logs" / "replication-offset-checkpoint"
    checkpoint.write_text("0\n1\nkept 0 42\n")
    result = subprocess.run(
        [sys.executable, "-m", "pykafkad", "serve", str(SERVER_PROPERTIES),
         "--override", f"log.dirs={tmp_path / 'logs'}", "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
         "--override", f"zookeeper.connect=127.0.0.1:{nobody}", "--override", "zookeeper.connection.timeout.ms=2000"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"pykafkad: cannot start: zookeeper.connect=127.0.0.1:{nobody}: cannot reach ZooKeeper"), \
        result.stderr
    assert "Traceback" not in result.stderr
    assert checkpoint.read_text() == "0\n1\nkept 0 42\n"
