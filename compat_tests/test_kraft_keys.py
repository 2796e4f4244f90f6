"""A Kafka 4 (KRaft) config: pykafkad has no KRaft quorum, so ``process.roles``,
``controller.quorum.voters``, ``controller.quorum.bootstrap.servers`` and
``controller.listener.names`` are ignored, and one warning line at start-up says so and what
this broker does instead (before, it started a standalone node with no word)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from compat_tests.broker_process import REPO_ROOT, free_port
from compat_tests.storage_support import wait_for

START_TIMEOUT_S = 60.0


def _kraft_properties(tmp_path: Path, port: int, controller_port: int) -> Path:
    """What Kafka 4.1's config/server.properties sets for a combined broker and controller."""
    path = tmp_path / "kraft-server.properties"
    path.write_text("\n".join([
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.bootstrap.servers=127.0.0.1:{controller_port}",
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "inter.broker.listener.name=PLAINTEXT",
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL",
        f"log.dirs={tmp_path / 'kraft-logs'}",
        "",
    ]))
    return path


def test_kraft_config_gets_one_warning_saying_what_happens_instead(tmp_path: Path) -> None:
    port, controller_port = free_port(), free_port()
    config = _kraft_properties(tmp_path, port, controller_port)
    stderr = tmp_path / "stderr.log"
    with open(stderr, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "pykafkad", "serve", str(config)], cwd=REPO_ROOT,
                                stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    try:
        wait_for("the broker starts", lambda: "pykafkad started" in stderr.read_text() or proc.poll() is not None,
                 timeout=START_TIMEOUT_S)
        assert proc.poll() is None, stderr.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=START_TIMEOUT_S)
    lines = [line for line in stderr.read_text().splitlines() if "KRaft" in line]
    assert len(lines) == 1, stderr.read_text()
    line = lines[0]
    assert " WARNING " in line
    for key in ("process.roles=broker,controller", "controller.quorum.bootstrap.servers=",
                "controller.listener.names=CONTROLLER"):
        assert key in line, line
    assert "pykafkad runs as a single node or on ZooKeeper (zookeeper.connect)" in line
    assert f"single node with its cluster metadata in {tmp_path / 'kraft-logs' / 'pykafkad-cluster-metadata.json'}" \
        in line
    assert "listener CONTROLLER serves clients like any other" in line
    assert "unknown configuration key" not in stderr.read_text()

