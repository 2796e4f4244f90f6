"""Graceful shutdown: SIGTERM and SIGINT end the broker with exit code 0, also while a client
holds a long-polling Fetch, and a restart on the same log directory serves every record at
once and appends after them."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.clients import (
    ConfluentClient,
    KafkaPythonClient,
    assert_records_match,
    create_topic,
    now_ms,
    sample_records,
    unique_topic,
)
from compat_tests.raw_kafka import API_FETCH, RawConnection


def _fill(b: BrokerProcess, topic: str, partitions: int, per_partition: int) -> dict[int, list[Any]]:
    sent = {}
    for p in range(partitions):
        recs = sample_records(per_partition, now_ms() - 500_000, partition=p, tag=f"p{p}")
        assert KafkaPythonClient(b.bootstrap).produce(topic, recs, compression="gzip") == list(
            range(per_partition)
        )
        sent[p] = recs
    return sent


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_graceful_stop_and_restart_keeps_everything(broker_factory: Any, sig: int) -> None:
    b = broker_factory("graceful", {"auto.create.topics.enable": "false"})
    topic = unique_topic("graceful")
    create_topic(b.bootstrap, topic, 2)
    sent = _fill(b, topic, 2, 200)

    assert b.stop(sig=sig) == 0
    assert b.partition_dir(topic, 0).is_dir() and b.partition_dir(topic, 1).is_dir()
    assert (b.partition_dir(topic, 0) / "00000000000000000000.log").stat().st_size > 0

    b.start()
    ck = ConfluentClient(b.bootstrap)
    for p in range(2):
        assert ck.offsets(topic, p) == (0, 200)
        assert_records_match(sent[p], ck.consume(topic, p, "earliest", count=200), list(range(200)))
        assert_records_match(
            sent[p][150:],
            KafkaPythonClient(b.bootstrap).consume(topic, p, 150, count=50),
            list(range(150, 200)),
        )
    more = sample_records(10, now_ms(), tag="more")
    assert ck.produce(topic, more) == list(range(200, 210))
    assert_records_match(more, ck.consume(topic, 0, 200, count=10), list(range(200, 210)))
    assert b.stop() == 0


def test_sigterm_with_a_fetch_waiting(broker_factory: Any) -> None:
    """A long-polling Fetch must not keep the broker from shutting down cleanly."""
    b = broker_factory("fetch-waiting", {"auto.create.topics.enable": "false"})
    topic = unique_topic("waiting")
    create_topic(b.bootstrap, topic)
    conn = RawConnection(b.port)
    try:
        import wire

        body = {
            "replica_id": -1,
            "max_wait_ms": 60_000,
            "min_bytes": 1,
            "max_bytes": 1_000_000,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1_000_000}],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        conn.send(wire.encode_request(API_FETCH, 12, 1, "compat-raw", body))
        # An idle connection too.
        idle = RawConnection(b.port)
        assert b.stop() == 0
        idle.close()
    finally:
        conn.close()
    b.start()
    assert ConfluentClient(b.bootstrap).offsets(topic, 0) == (0, 0)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_starting_stops_cleanly(tmp_path: Any, sig: int) -> None:
    # A broker waiting for an unreachable ZooKeeper is starting for zookeeper.connection.timeout.ms: a
    # signal then stops it at once, cleanly.  Before, SIGTERM killed it (exit -15) and SIGINT left a
    # traceback, or it waited out the timeout.
    with socket_free() as zk_port:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pykafkad", "serve", "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
             "--override", f"log.dirs={tmp_path / 'logs'}", "--override", f"zookeeper.connect=127.0.0.1:{zk_port}",
             "--override", "zookeeper.connection.timeout.ms=600000"],
            stderr=subprocess.PIPE, text=True)
        try:
            lines = []
            assert proc.stderr is not None
            for line in proc.stderr:  # kazoo warns of each refused attempt: the broker is starting
                lines.append(line)
                if "Connection refused" in line:
                    break
            proc.send_signal(sig)
            _, rest = proc.communicate(timeout=60)
        finally:
            proc.kill()
    log = "".join(lines) + rest
    assert proc.returncode == 0, log
    assert f"received {signal.Signals(sig).name} while starting: stopping" in log, log
    assert "pykafkad stopped" in log and "Traceback" not in log, log


class socket_free:
    """A port nothing listens on, for the time of the block (bound, not listening: connections are refused)."""

    def __enter__(self) -> int:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
