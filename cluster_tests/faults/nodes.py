"""The processes of the fault injector's cluster, each in its own network namespace: ZooKeeper and three
pykafkad brokers, or, for the reference run, three Apache Kafka KRaft nodes (broker and controller
in one process, as Kafka's quickstart runs them).

A node knows how to start (and restart on its old address and data), be killed with SIGKILL, be
paused with SIGSTOP and resumed with SIGCONT.  Each broker's log dir is its own small tmpfs, so the
disk-full fault can fill it (``DataDir.fill``) and free it again.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from cluster_tests.faults.network import Network
from cluster_tests.zookeeper_server import ZOOKEEPER_LIB
from compat_tests.broker_process import REPO_ROOT, SERVER_PROPERTIES

KAFKA_PORT = 9092
ZK_PORT = 2181
CONTROLLER_PORT = 9093
START_TIMEOUT_S = 90.0
DATA_FS_SIZE = "256m"
# What a filled disk leaves free: less than one produce batch, so the next append fails.
FULL_LEAVES_BYTES = 16 * 1024


def die_with_parent() -> None:
    # PR_SET_PDEATHSIG: a harness killed without its teardown takes its cluster with it.
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


class DataDir:
    """A log dir on a tmpfs of its own, which the disk-full fault fills with a ballast file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.mkdir(parents=True, exist_ok=True)
        self.mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DATA_FS_SIZE}", "tmpfs", str(path)],
                                      capture_output=True, check=False).returncode == 0
        self.ballast = path.parent / f"{path.name}-ballast"

    def fill(self) -> int:
        """Fill the filesystem up to FULL_LEAVES_BYTES; the bytes written."""
        if not self.mounted:
            raise RuntimeError(f"{self.path} is not a tmpfs of its own: cannot fill it")
        target = self.path / ".ballast"
        free = os.statvfs(self.path).f_bavail * os.statvfs(self.path).f_frsize - FULL_LEAVES_BYTES
        written = 0
        # Unbuffered: the write that meets a full disk raises at once, and nothing is left for close()
        # to flush (a buffered writer raised ENOSPC there, and the fault counted as not injected
        # though the disk was full, which is the point).
        with open(target, "wb", buffering=0) as out:
            chunk = b"\0" * (1 << 20)
            while written < free:
                try:
                    written += out.write(chunk[: min(len(chunk), free - written)]) or 0
                except OSError:
                    break
        return written

    def free(self) -> None:
        (self.path / ".ballast").unlink(missing_ok=True)

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)


class Process:
    """One node's process, started inside its namespace."""

    def __init__(self, name: str, network: Network, port: int, log: Path) -> None:
        self.name = name
        self.network = network
        self.port = port
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False
        self.starts = 0

    @property
    def address(self) -> str:
        return self.network.address(self.name)

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Before the first start (Kafka formats its log dir here)."""

    def start(self, wait: bool = True) -> Process:
        if self.starts == 0:
            self.prepare()
        self.starts += 1
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")
        with open(self.log, "ab") as out:
            out.write(f"\n===== start #{self.starts} at {time.strftime('%H:%M:%S')}\n".encode())
            out.flush()
            self.proc = subprocess.Popen([*self.network.prefix(self.name), *self.command()], cwd=REPO_ROOT,
                                         env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         preexec_fn=die_with_parent)
        self.paused = False
        if wait:
            self.wait_listening()
        return self

    def wait_listening(self, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.name} exited with {self.proc and self.proc.returncode}:\n{self.tail()}")
            try:
                with socket.create_connection((self.address, self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not listen on {self.endpoint} within {timeout}s:\n{self.tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        if self.alive():
            assert self.proc is not None
            if self.paused:
                self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(30)
        self.paused = False

    def pause(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.alive() and self.paused:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self, timeout: float = 60) -> None:
        if self.alive():
            assert self.proc is not None
            self.resume()
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""


class ZooKeeperNode(Process):
    def __init__(self, network: Network, work: Path) -> None:
        super().__init__("zk", network, ZK_PORT, work / "zookeeper.log")
        self.data = work / "zookeeper"
        self.config = work / "zoo.cfg"

    def prepare(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        # tickTime 500 ms: brokers may use 3 s sessions, so an expired session is seen in seconds.
        self.config.write_text(f"tickTime=500\ndataDir={self.data}\nclientPort={ZK_PORT}\n"
                               f"clientPortAddress={self.address}\nmaxSessionTimeout=60000\n"
                               "4lw.commands.whitelist=ruok\njute.maxbuffer=16777216\n")

    def command(self) -> list[str]:
        return ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dzookeeper.admin.enableServer=false", "-cp", f"{ZOOKEEPER_LIB}/*",
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(self.config)]


class Broker(Process):
    """A broker node: its id, its log dir (``DataDir``)."""

    def __init__(self, node_id: int, network: Network, work: Path) -> None:
        super().__init__(f"b{node_id}", network, KAFKA_PORT, work / f"b{node_id}.log")
        self.node_id = node_id
        self.data = DataDir(work / f"b{node_id}-data")

    def close(self) -> None:
        self.data.close()


class PykafkadBroker(Broker):
    def __init__(self, node_id: int, network: Network, work: Path, settings: dict[str, str]) -> None:
        super().__init__(node_id, network, work)
        self.settings = settings

    def command(self) -> list[str]:
        listener = f"PLAINTEXT://{self.endpoint}"
        settings = {"listeners": listener, "advertised.listeners": listener, "log.dirs": str(self.data.path),
                    "broker.id": str(self.node_id), "node.id": str(self.node_id),
                    "zookeeper.connect": f"{self.network.address('zk')}:{ZK_PORT}/faults", **self.settings}
        cmd = [sys.executable, "-m", "pykafkad", "serve", str(SERVER_PROPERTIES)]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd


class KafkaNode(Broker):
    """Apache Kafka in KRaft mode: broker and controller in one process (the reference)."""

    def __init__(self, node_id: int, network: Network, work: Path, settings: dict[str, str], voters: str,
                 lib: Path) -> None:
        super().__init__(node_id, network, work)
        self.settings = settings
        self.voters = voters
        self.lib = lib
        self.config = work / f"kafka-{node_id}.properties"

    def prepare(self) -> None:
        from benchmarks import kafka_dist
        props = {"process.roles": "broker,controller", "node.id": str(self.node_id),
                 "controller.quorum.voters": self.voters,
                 "listeners": f"PLAINTEXT://{self.endpoint},CONTROLLER://{self.address}:{CONTROLLER_PORT}",
                 "advertised.listeners": f"PLAINTEXT://{self.endpoint}", "inter.broker.listener.name": "PLAINTEXT",
                 "controller.listener.names": "CONTROLLER",
                 "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                 "log.dirs": str(self.data.path), **self.settings}
        self.config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        subprocess.run(kafka_dist.format_command(self.config, self.lib), check=True, capture_output=True,
                       timeout=180)

    def command(self) -> list[str]:
        return ["java", "-Xmx512m", "-Xms512m", "-XX:+UseG1GC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", f"{self.lib}/*", "kafka.Kafka", str(self.config)]
