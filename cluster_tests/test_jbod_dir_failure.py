"""JBOD: a broker with two log dirs, one of which fills, takes only that dir's replicas offline; their
leadership moves to other in-sync replicas, and they come back by themselves once there is room.

Three brokers on a real ZooKeeper.  Broker 1 has two log dirs, the second a small tmpfs; a topic of
two partitions, both preferring broker 1, gets one partition in each dir.  With a filler file
leaving the tmpfs about 2 MB, librdkafka (idempotent, acks=all) writes 4 MB to the tmpfs partition:
broker 1's append fails with ENOSPC, the dir goes offline, broker 1 reports its replica there
(``/brokers/offline_replicas/1``) and the controller hands the partition to another in-sync replica,
taking broker 1 out of its ISR; the producer retries to the new leader and every record is
acknowledged.  The partition in the other dir keeps broker 1 as leader, at the same epoch, and takes
more writes.  ``kafka-log-dirs --describe`` shows the full dir with a KafkaStorageException and no
partitions.  Deleting the filler brings the dir back without a restart: the replica fetches again
and rejoins the ISR, ``kafka-log-dirs`` lists it again, and every acknowledged record is read back
at its offset, on the replica that came back too.
Mounting needs root; the test skips saying so when the mount is refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster_tests.clients import STATE, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool
from compat_tests.storage_support import disk_records, mounted_small_fs

TOPIC = "jbod"
ROOM_BYTES = 2 * 1024 * 1024
VALUE_BYTES = 10_000
FILL_VALUES = 400  # 4 MB: twice the room left on the tmpfs
OFFLINE_NODE = "/brokers/offline_replicas/1"
IDEMPOTENT = {"enable.idempotence": True}


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    yield from mounted_small_fs(tmp_path)


def _log_dirs(bootstrap: str) -> dict[str, dict[str, Any]]:
    """``kafka-log-dirs --describe`` of broker 1: each log dir's entry, by path."""
    out = run_tool("kafka-log-dirs", ["--bootstrap-server", bootstrap, "--describe", "--broker-list", "1"]).stdout
    doc = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    [broker] = doc["brokers"]
    return {d["logDir"]: d for d in broker["logDirs"]}


def _partitions(entry: dict[str, Any]) -> set[str]:
    return {p["partition"] for p in entry["partitions"]}


@pytest.mark.cluster_timeout(240)
def test_a_full_log_dir_moves_only_its_partitions_and_its_replicas_return_once_there_is_room(
        small_fs: Path, cluster: Cluster) -> None:
    settings = {"auto.create.topics.enable": "false", "replica.fetch.backoff.ms": "200",
                "auto.leader.rebalance.enable": "false"}
    normal_dir = cluster.root / "broker-1" / "logs"
    full_dir = small_fs / "logs"
    # small_fs first: unmounted only after the brokers have stopped.  Broker 1's own output goes to
    # its first dir, off the filesystem it fills.
    one = cluster.start_broker(1, {**settings, "log.dirs": f"{normal_dir},{full_dir}"})
    cluster.start_broker(2, settings)
    cluster.start_broker(3, settings)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", TOPIC,
                                  "--replica-assignment", "1:2:3,1:3:2"])
        states = [view.wait_data(STATE.format(topic=TOPIC, partition=p),
                                 lambda s: s is not None and len(s["isr"]) == 3) for p in (0, 1)]
        assert [s["leader"] for s in states] == [1, 1]
        # New partitions go to the log dir holding the fewest: one in each.
        on_full = [p for p in (0, 1) if (full_dir / f"{TOPIC}-{p}").is_dir()]
        assert len(on_full) == 1, sorted(os.listdir(full_dir))
        [full_p] = on_full
        healthy_p = 1 - full_p
        assert (normal_dir / f"{TOPIC}-{healthy_p}").is_dir()
        healthy_epoch = states[healthy_p]["leader_epoch"]

        acked = produce(cluster.bootstrap, TOPIC, list(range(100)), partition=healthy_p, **IDEMPOTENT)
        st = os.statvfs(small_fs)
        (small_fs / "filler").write_bytes(b"\xff" * (st.f_bavail * st.f_frsize - ROOM_BYTES))

        # The tmpfs fills: the producer's retries land on the partition's new leader.
        acked |= produce(cluster.bootstrap, TOPIC, list(range(1000, 1000 + FILL_VALUES)), partition=full_p,
                         size=VALUE_BYTES, **IDEMPOTENT)
        moved = view.wait_data(STATE.format(topic=TOPIC, partition=full_p),
                               lambda s: s["leader"] in (2, 3) and 1 not in s["isr"])
        assert sorted(moved["isr"]) == [2, 3]
        report = view.json(OFFLINE_NODE)
        assert report["partitions"] == {TOPIC: [full_p]}
        assert report["log_dirs"] == [str(full_dir)]

        # The partition in the other dir is untouched: same leader, same epoch, all in sync, writable.
        healthy = view.json(STATE.format(topic=TOPIC, partition=healthy_p))
        assert (healthy["leader"], healthy["leader_epoch"], sorted(healthy["isr"])) == (1, healthy_epoch, [1, 2, 3])
        acked |= produce(cluster.bootstrap, TOPIC, list(range(2000, 2100)), partition=healthy_p,
                         **IDEMPOTENT)
        acked |= produce(cluster.bootstrap, TOPIC, list(range(3000, 3100)), partition=full_p,
                         **IDEMPOTENT)

        dirs = _log_dirs(cluster.bootstrap)
        offline = dirs[str(full_dir.resolve())]
        assert "KafkaStorageException" in str(offline["error"]), offline
        assert offline["partitions"] == []
        online = dirs[str(normal_dir.resolve())]
        assert online["error"] is None and f"{TOPIC}-{healthy_p}" in _partitions(online)

        # Room again: the replica comes back and rejoins the ISR without a restart.
        (small_fs / "filler").unlink()
        back = view.wait_data(STATE.format(topic=TOPIC, partition=full_p), lambda s: 1 in s["isr"], timeout=60)
        view.wait_data(OFFLINE_NODE, lambda node: node is None)
        dirs = _log_dirs(cluster.bootstrap)
        returned = dirs[str(full_dir.resolve())]
        assert returned["error"] is None and _partitions(returned) == {f"{TOPIC}-{full_p}"}
        assert one.is_alive()

        # Every acknowledged record, once each, at its offset; the returned replica has them all.
        got = read_everything(cluster.bootstrap, TOPIC, 2, len(acked))
        assert {value: (p, offset) for value, p, offset in got} == acked
        leader_dir = cluster.brokers[back["leader"]].partition_dir(TOPIC, full_p)
        leader_records = disk_records(leader_dir)
        assert len(leader_records) == FILL_VALUES + 100
        assert disk_records(full_dir / f"{TOPIC}-{full_p}") == leader_records
    finally:
        view.close()
