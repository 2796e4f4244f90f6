"""Apache ZooKeeper as a real subprocess for the cluster tests, and its shell.

`ZooKeeperServer` runs a standalone ZooKeeper (the jars `make zookeeper-deps` puts in
ZOOKEEPER_LIB, from Maven Central) on a free loopback port with its own data directory, and waits
until it answers.  `zk_cli` runs ZooKeeper's own shell (`org.apache.zookeeper.ZooKeeperMain`, what
`zkCli.sh` runs) against it, as an operator would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from compat_tests.broker_process import REPO_ROOT, free_port

ZOOKEEPER_LIB = Path(os.environ.get("ZOOKEEPER_LIB", REPO_ROOT / ".cache" / "zookeeper" / "lib"))
START_TIMEOUT_S = 30.0
# tickTime 500 ms lets brokers use short sessions (ZooKeeper's minimum is two ticks), so a killed
# broker's registration expires in seconds.
TICK_MS = 500


def _java(main: str, *args: str) -> list[str]:
    if not (ZOOKEEPER_LIB / "zookeeper-jute-3.9.4.jar").exists():
        raise AssertionError(f"ZooKeeper jars missing in {ZOOKEEPER_LIB}: run `make zookeeper-deps`")
    return ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Dzookeeper.admin.enableServer=false", "-cp", f"{ZOOKEEPER_LIB}/*", main, *args]


class ZooKeeperServer:
    # Run in the child before ZooKeeper's JVM starts (a harness makes it die with its parent).
    preexec_fn: Callable[[], None] | None = None

    def __init__(self, data_dir: Path, max_request_bytes: int | None = None) -> None:
        """``max_request_bytes`` is ZooKeeper's ``jute.maxbuffer``; None leaves its default (1 MB), as
        an operator's ZooKeeper has it."""
        self.data_dir = Path(data_dir)
        self.max_request_bytes = max_request_bytes
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.log_path = self.data_dir.parent / "zookeeper.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ZooKeeperServer:
        config = self.data_dir.parent / "zoo.cfg"
        config.write_text(
            f"tickTime={TICK_MS}\ndataDir={self.data_dir}\nclientPort={self.port}\n"
            f"clientPortAddress=127.0.0.1\nmaxSessionTimeout=60000\n4lw.commands.whitelist=ruok\n"
            + ("" if self.max_request_bytes is None else f"jute.maxbuffer={self.max_request_bytes}\n")
        )
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                _java("org.apache.zookeeper.server.quorum.QuorumPeerMain", str(config)),
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=self.preexec_fn)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"ZooKeeper exited with {self.proc.returncode}:\n{self.log_tail()}")
            if self._ruok():
                return self
            time.sleep(0.1)
        raise AssertionError(f"ZooKeeper did not answer on {self.port} within {START_TIMEOUT_S}s\n{self.log_tail()}")

    def _ruok(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"ruok")
                return s.recv(4) == b"imok"
        except OSError:
            return False

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def zk_cli(connect: str, *command: str) -> str:
    """Run one zkCli.sh command (e.g. ``ls /brokers/ids``) and return what it printed last."""
    result = subprocess.run(_java("org.apache.zookeeper.ZooKeeperMain", "-server", connect, *command),
                            capture_output=True, text=True, timeout=60)
    lines = [line for line in result.stdout.splitlines()
             if line.strip() and not line.startswith(("Connecting to", "WATCHER::", "WatchedEvent"))]
    return lines[-1] if lines else ""
