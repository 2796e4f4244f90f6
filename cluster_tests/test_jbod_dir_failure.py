"""JBOD: a broker with two log dirs, one of which fills, takes only that dir's replicas offline; their
leadership moves to other in-sync replicas, and they come back by themselves once there is room.

Three brokers on a real ZooKeeper.  Broker 1 has two log dirs, the second a small tmpfs; a topic of
four partitions puts two of broker 1's replicas in each dir, in each one replica it leads and one it
follows.  Kafka's Java producer (idempotent, acks=all) writes to every partition throughout.  With a
filler file leaving the tmpfs about 2 MB, librdkafka (idempotent, acks=all) writes 4 MB to the tmpfs
partition broker 1 leads: its append fails with ENOSPC, the dir goes offline, broker 1 reports its
replicas there (``/brokers/offline_replicas/1``) and the controller hands that partition to another
in-sync replica and takes broker 1 out of both partitions' ISR at once (``replica.lag.time.max.ms``
is longer than the test); both producers retry to the new leader and every record is acknowledged.
The partitions in the other dir keep their leaders, epochs and ISR, and take more writes.
``kafka-log-dirs --describe`` shows the full dir with a KafkaStorageException and no partitions.
Deleting the filler brings the dir back without a restart: the replicas fetch again and rejoin the
ISR, ``kafka-log-dirs`` lists them again, and every acknowledged record is read back at its offset,
and the returned replicas hold what their leaders hold.  The second test has the dir fail under
broker 1's follower append instead: the partition it leads there, which nobody writes to, moves too.
Mounting needs root; the test skips saying so when the mount is refused.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster_tests.clients import STATE, JavaLoad, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import BrokerProcess
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from compat_tests.storage_support import disk_records, mounted_small_fs, wait_for

TOPIC = "jbod"
PARTITIONS = 4
LIBRDKAFKA_BASE = 1_000_000
ROOM_BYTES = 2 * 1024 * 1024
VALUE_BYTES = 10_000
FILL_VALUES = 400  # 4 MB: twice the room left on the tmpfs
OFFLINE_NODE = "/brokers/offline_replicas/1"
METADATA = 3
IDEMPOTENT = {"enable.idempotence": True}


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    yield from mounted_small_fs(tmp_path)


def _offline_replicas(broker: BrokerProcess) -> dict[int, list[int]]:
    """Metadata's offline replicas of each partition of TOPIC, as ``broker`` answers."""
    with RawConnection(broker.port) as conn:
        answer = conn.request(METADATA, 12, {"topics": [{"name": TOPIC, "topic_id": uuid.UUID(int=0)}],
                                             "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
    return {p["partition_index"]: sorted(p["offline_replicas"]) for p in answer["topics"][0]["partitions"]}


def _log_dirs(bootstrap: str) -> dict[str, dict[str, Any]]:
    """``kafka-log-dirs --describe`` of broker 1: each log dir's entry, by path."""
    out = run_tool("kafka-log-dirs", ["--bootstrap-server", bootstrap, "--describe", "--broker-list", "1"]).stdout
    doc = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    [broker] = doc["brokers"]
    return {d["logDir"]: d for d in broker["logDirs"]}


def _partitions(entry: dict[str, Any]) -> set[str]:
    return {p["partition"] for p in entry["partitions"]}


def _start(cluster: Cluster, small_fs: Path) -> tuple[BrokerProcess, Path, Path]:
    """Three brokers, broker 1 with a second log dir on the tmpfs: (broker 1, its first dir, the tmpfs
    dir).  The tests take ``small_fs`` before ``cluster``, so it is unmounted only after the brokers
    have stopped; broker 1's own output goes next to its first dir, off the filesystem it fills.
    ``replica.lag.time.max.ms`` is longer than a test, so only the controller takes a replica out of
    an ISR."""
    settings = {"auto.create.topics.enable": "false", "replica.fetch.backoff.ms": "200",
                "auto.leader.rebalance.enable": "false", "replica.lag.time.max.ms": "600000"}
    normal_dir = cluster.root / "broker-1" / "logs"
    full_dir = small_fs / "logs"
    one = cluster.start_broker(1, {**settings, "log.dirs": f"{normal_dir},{full_dir}"})
    cluster.start_broker(2, settings)
    cluster.start_broker(3, settings)
    return one, normal_dir, full_dir


def _fill(small_fs: Path) -> None:
    """A filler file leaving the tmpfs ROOM_BYTES free."""
    st = os.statvfs(small_fs)
    (small_fs / "filler").write_bytes(b"\xff" * (st.f_bavail * st.f_frsize - ROOM_BYTES))


@pytest.mark.cluster_timeout(300)
def test_a_full_log_dir_moves_only_its_partitions_and_its_replicas_return_once_there_is_room(
        small_fs: Path, cluster: Cluster, tmp_path: Path) -> None:
    one, normal_dir, full_dir = _start(cluster, small_fs)
    view = ZooKeeperView(cluster.zk_connect)
    java: JavaLoad | None = None
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        # Broker 1 places its new replicas in turn in the dir holding the fewest: 0 and 2 in the first,
        # 1 and 3 in the tmpfs.
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", TOPIC,
                                  "--replica-assignment", "1:2:3,1:3:2,3:1:2,2:1:3"])
        states = {p: view.wait_data(STATE.format(topic=TOPIC, partition=p),
                                    lambda s: s is not None and len(s["isr"]) == 3) for p in range(PARTITIONS)}
        on_full = {p for p in range(PARTITIONS) if (full_dir / f"{TOPIC}-{p}").is_dir()}
        assert on_full == {1, 3}, sorted(os.listdir(full_dir))
        led, followed = 1, 3
        assert (states[led]["leader"], states[followed]["leader"]) == (1, 2)
        healthy = {p: (states[p]["leader"], states[p]["leader_epoch"]) for p in (0, 2)}
        assert healthy[0][0] == 1 and healthy[2][0] == 3

        java = JavaLoad(cluster.bootstrap, TOPIC, tmp_path)
        java.wait_acked(200)
        acked = produce(cluster.bootstrap, TOPIC, values(0, 100), partition=0, **IDEMPOTENT)
        _fill(small_fs)

        # The tmpfs fills: the producer's retries land on the partition's new leader.
        acked |= produce(cluster.bootstrap, TOPIC, values(1000, FILL_VALUES), partition=led, size=VALUE_BYTES,
                         **IDEMPOTENT)
        moved = view.wait_data(STATE.format(topic=TOPIC, partition=led),
                               lambda s: s["leader"] in (2, 3) and 1 not in s["isr"])
        assert sorted(moved["isr"]) == [2, 3]
        # The replica it follows there leaves the ISR at once, not after replica.lag.time.max.ms.
        follower = view.wait_data(STATE.format(topic=TOPIC, partition=followed), lambda s: 1 not in s["isr"])
        assert (follower["leader"], sorted(follower["isr"])) == (2, [2, 3])
        report = view.json(OFFLINE_NODE)
        assert report["partitions"] == {TOPIC: [led, followed]}
        assert report["log_dirs"] == [str(full_dir)]
        # Metadata lists broker 1's replicas there as offline, as Kafka does for a failed log dir.
        for broker in cluster.brokers.values():
            wait_for("Metadata's offline replicas", lambda b=broker: _offline_replicas(b) == {
                0: [], led: [1], 2: [], followed: [1]})

        # The partitions in the other dir are untouched: same leader, same epoch, all in sync, writable.
        for p, (leader, epoch) in healthy.items():
            state = view.json(STATE.format(topic=TOPIC, partition=p))
            assert (state["leader"], state["leader_epoch"], sorted(state["isr"])) == (leader, epoch, [1, 2, 3])
        acked |= produce(cluster.bootstrap, TOPIC, values(2000, 100), partition=0, **IDEMPOTENT)
        acked |= produce(cluster.bootstrap, TOPIC, values(3000, 100), partition=led, **IDEMPOTENT)
        java.wait_acked(len(java.acked) + 500)

        dirs = _log_dirs(cluster.bootstrap)
        offline = dirs[str(full_dir.resolve())]
        assert "KafkaStorageException" in str(offline["error"]), offline
        assert offline["partitions"] == []
        online = dirs[str(normal_dir.resolve())]
        assert online["error"] is None and _partitions(online) == {f"{TOPIC}-0", f"{TOPIC}-2"}

        # Room again: the replicas come back and rejoin the ISR without a restart.
        (small_fs / "filler").unlink()
        back = {p: view.wait_data(STATE.format(topic=TOPIC, partition=p), lambda s: 1 in s["isr"], timeout=60)
                for p in (led, followed)}
        view.wait_data(OFFLINE_NODE, lambda node: node is None)
        wait_for("no offline replicas", lambda: _offline_replicas(one) == {p: [] for p in range(PARTITIONS)})
        dirs = _log_dirs(cluster.bootstrap)
        returned = dirs[str(full_dir.resolve())]
        assert returned["error"] is None and _partitions(returned) == {f"{TOPIC}-{led}", f"{TOPIC}-{followed}"}
        java.wait_acked(len(java.acked) + 200)
        java.stop()
        java_acked, java = java.acked, None
        assert one.is_alive()

        # Every acknowledged record, once each, at its offset; the returned replicas hold what their
        # leaders hold.
        assert not acked.keys() & java_acked.keys()
        acked |= java_acked
        got = read_everything(cluster.bootstrap, TOPIC, PARTITIONS, len(acked))
        assert {value: (p, offset) for value, p, offset in got} == acked
        for p, state in back.items():
            leader_records = disk_records(cluster.brokers[state["leader"]].partition_dir(TOPIC, p))
            assert disk_records(full_dir / f"{TOPIC}-{p}") == leader_records
    finally:
        if java is not None:
            java.stop()
        view.close()


@pytest.mark.cluster_timeout(300)
def test_a_follower_that_fills_its_log_dir_takes_the_dirs_leaderships_to_other_replicas(
        small_fs: Path, cluster: Cluster) -> None:
    """The dir fails under a follower's append (records another broker leads): the partition broker 1
    leads in the same dir, which nobody writes to, moves too, and both come back once there is room."""
    _, _, full_dir = _start(cluster, small_fs)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        # In the tmpfs: 1 (broker 2 leads) and 3 (broker 1 leads).
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", TOPIC,
                                  "--replica-assignment", "1:2:3,2:1:3,3:1:2,1:3:2"])
        states = {p: view.wait_data(STATE.format(topic=TOPIC, partition=p),
                                    lambda s: s is not None and len(s["isr"]) == 3) for p in range(PARTITIONS)}
        assert {p for p in range(PARTITIONS) if (full_dir / f"{TOPIC}-{p}").is_dir()} == {1, 3}
        followed, led = 1, 3
        acked = produce(cluster.bootstrap, TOPIC, values(0, 100), partition=led, **IDEMPOTENT)
        _fill(small_fs)

        # Broker 2 takes the writes; broker 1's copy of them fills its dir.
        acked |= produce(cluster.bootstrap, TOPIC, values(1000, FILL_VALUES), partition=followed,
                         size=VALUE_BYTES, **IDEMPOTENT)
        moved = view.wait_data(STATE.format(topic=TOPIC, partition=led), lambda s: s["leader"] != 1)
        assert (moved["leader"], sorted(moved["isr"])) == (3, [2, 3])
        follower = view.wait_data(STATE.format(topic=TOPIC, partition=followed), lambda s: 1 not in s["isr"])
        assert (follower["leader"], sorted(follower["isr"])) == (2, [2, 3])
        for p in (0, 2):
            state = view.json(STATE.format(topic=TOPIC, partition=p))
            assert (state["leader"], state["leader_epoch"], sorted(state["isr"])) == \
                (states[p]["leader"], states[p]["leader_epoch"], [1, 2, 3])
        acked |= produce(cluster.bootstrap, TOPIC, values(2000, 100), partition=led, **IDEMPOTENT)

        (small_fs / "filler").unlink()
        back = {p: view.wait_data(STATE.format(topic=TOPIC, partition=p), lambda s: 1 in s["isr"], timeout=60)
                for p in (led, followed)}
        got = read_everything(cluster.bootstrap, TOPIC, PARTITIONS, len(acked))
        assert {value: (p, offset) for value, p, offset in got} == acked
        for p, state in back.items():
            leader_records = disk_records(cluster.brokers[state["leader"]].partition_dir(TOPIC, p))
            assert disk_records(full_dir / f"{TOPIC}-{p}") == leader_records
    finally:
        view.close()


def values(first: int, count: int) -> list[int]:
    """Numbers for librdkafka's records, above any the Java producer counts to in this test."""
    return list(range(LIBRDKAFKA_BASE + first, LIBRDKAFKA_BASE + first + count))
