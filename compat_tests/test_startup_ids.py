"""``broker.id`` and ``node.id`` at start-up: an override of either wins over the file's value of
either (``configs/server.properties`` sets ``node.id=1``; ``--override broker.id=2`` gives broker 2,
as every Kafka operations guide has it), and two different ids from one source are refused in
Kafka's words."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafka import KafkaAdminClient

from compat_tests.broker_process import SERVER_PROPERTIES, BrokerProcess, free_port

REPO_ROOT = Path(__file__).resolve().parent.parent
KAFKA_MESSAGE = "You must set `node.id` to the same value as `broker.id`"


class _FileIdBroker(BrokerProcess):
    """A broker whose id comes from configs/server.properties and the test's overrides only
    (BrokerProcess itself passes node.id=1)."""

    def command(self) -> list[str]:
        cmd = super().command()
        if "node.id" not in self.overrides:
            at = cmd.index("node.id=1")
            del cmd[at - 1:at + 1]
        return cmd


def _described_ids(bootstrap: str) -> list[int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        return [b["broker_id"] for b in admin.describe_cluster()["brokers"]]
    finally:
        admin.close()


def test_override_of_broker_id_wins_over_the_files_node_id(tmp_path: Path) -> None:
    assert "node.id=1" in SERVER_PROPERTIES.read_text().splitlines()
    broker = _FileIdBroker(tmp_path / "logs", {"broker.id": "2"}, name="broker-id-2").start()
    try:
        assert _described_ids(broker.bootstrap) == [2]
    finally:
        broker.stop()
    assert "broker.id=2" in (tmp_path / "logs" / "meta.properties").read_text().splitlines()


def test_override_of_node_id_wins_too(tmp_path: Path) -> None:
    broker = _FileIdBroker(tmp_path / "logs", {"node.id": "3"}, name="node-id-3").start()
    try:
        assert _described_ids(broker.bootstrap) == [3]
    finally:
        broker.stop()


def _serve(tmp_path: Path, config: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pykafkad", "serve", str(config),
           "--override", f"log.dirs={tmp_path / 'logs'}",
           "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}"]
    for item in overrides:
        cmd += ["--override", item]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)


def test_two_different_overrides_are_refused_naming_both_keys(tmp_path: Path) -> None:
    result = _serve(tmp_path, SERVER_PROPERTIES, "broker.id=2", "node.id=3")
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"pykafkad: bad configuration: {KAFKA_MESSAGE} (node.id=3, broker.id=2 given as --override)."]
    assert not (tmp_path / "logs").exists()


def test_two_different_ids_in_the_file_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "server.properties"
    config.write_text(SERVER_PROPERTIES.read_text() + "\nbroker.id=4\n")
    result = _serve(tmp_path, config)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"pykafkad: bad configuration: {KAFKA_MESSAGE} (node.id=1, broker.id=4 in {config})."]


def test_the_same_id_twice_is_one_id(tmp_path: Path) -> None:
    broker = _FileIdBroker(tmp_path / "logs", {"broker.id": "5", "node.id": "5"}, name="same-id").start()
    try:
        assert _described_ids(broker.bootstrap) == [5]
    finally:
        broker.stop()
