"""A follower whose log dir fills: it leaves the ISR while it cannot append, keeps fetching, and
rejoins the ISR by itself once space returns (no restart, no leader change).

Two brokers on a real ZooKeeper; broker 2's only log dir is a small tmpfs holding a filler file.  While
broker 2 is paused (SIGSTOP) the leader (broker 1) shrinks the ISR to itself and takes more than
broker 2 has room for; resumed, broker 2 appends until ENOSPC and its ``/readyz`` names the dir.
Deleting the filler lets the follower catch up by itself (nothing in the metadata changes meanwhile
to restart its fetching): the ISR is [1, 2] again and both replicas hold the same records.
Mounting needs root; the test skips saying so when the mount is refused.
"""

from __future__ import annotations

import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import free_port
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch
from compat_tests.storage_support import disk_records, mounted_small_fs, wait_for

PRODUCE = 0
STATE = "/brokers/topics/{topic}/partitions/0/state"
FILLER_BYTES = 4 * 1024 * 1024
ROUNDS = 60  # 100 KB each: 6 MB, more than the follower's 4 MB of room, less than its 8 MB
VALUE_BYTES = 2000
BATCH = 50




@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    yield from mounted_small_fs(tmp_path)



def _readyz(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.mark.cluster_timeout(180)
def test_follower_with_a_full_log_dir_rejoins_the_isr_once_space_returns(cluster: Cluster, small_fs: Path,
                                                                         tmp_path: Path) -> None:
    # A session long enough that the paused follower stays registered: nothing in the metadata changes
    # while it is full, so only its own retrying can bring it back.
    settings = {"replica.lag.time.max.ms": "3000", "replica.fetch.backoff.ms": "200",
                "zookeeper.session.timeout.ms": "30000", "auto.create.topics.enable": "false"}
    cluster.start_broker(1, settings)
    full_dir = small_fs / "logs"
    http_port = free_port()
    follower = cluster.start_broker(2, {**settings, "log.dirs": str(full_dir),
                                        "metrics.listener": f"http://127.0.0.1:{http_port}"})
    (small_fs / "filler").write_bytes(b"\xff" * FILLER_BYTES)
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2"])
        topic = "fills"
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", topic,
                                  "--replica-assignment", "1:2"])
        state = view.wait_data(STATE.format(topic=topic), lambda s: s is not None and sorted(s["isr"]) == [1, 2])
        assert state["leader"] == 1

        # The follower is paused out of the ISR first, so the ISR does not change once it is full.
        assert follower.proc is not None
        os.kill(follower.proc.pid, signal.SIGSTOP)
        try:
            view.wait_data(STATE.format(topic=topic), lambda s: s["isr"] == [1])
            # Raw Produce to the leader alone: a client would also ask the paused broker for metadata.
            with RawConnection(cluster.brokers[1].port) as conn:
                for r in range(ROUNDS):
                    values = [f"v{r:03d}-{i:02d}-".encode() + b"x" * VALUE_BYTES for i in range(BATCH)]
                    answer = conn.request(PRODUCE, 9, produce_body(topic, 0, record_batch(values, 1000 + r), acks=1))
                    assert produce_partition_response(answer)["error_code"] == 0, answer
        finally:
            os.kill(follower.proc.pid, signal.SIGCONT)

        # The follower catches up until its disk is full; its /readyz says which dir.
        status, body = wait_for("the follower's /readyz to name its full dir",
                                lambda: (a := _readyz(http_port))[0] == 503 and str(full_dir) in a[1] and a,
                                timeout=30)
        assert "full" in body

        # Space returns: the follower catches up and rejoins, without a restart.
        (small_fs / "filler").unlink()
        view.wait_data(STATE.format(topic=topic), lambda s: sorted(s["isr"]) == [1, 2], timeout=60)
        wait_for("the follower's /readyz to clear", lambda: _readyz(http_port)[0] == 200, timeout=30)
        assert follower.is_alive()
        leader_records = disk_records(cluster.brokers[1].partition_dir(topic, 0))
        assert len(leader_records) == ROUNDS * BATCH
        assert disk_records(full_dir / f"{topic}-0") == leader_records
    finally:
        view.close()
