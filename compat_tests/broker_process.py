"""Run pykafkad as a real subprocess for the compat tests.

`BrokerProcess` starts `python -m pykafkad serve configs/server.properties` on a
free loopback port with its own log directory, waits until the port accepts
connections (set env COMPAT_BROKER=kafka to start a real Kafka broker instead, as a
reference), and can stop it gracefully (SIGTERM, exit code 0 asserted), kill it
with SIGKILL, and restart it on the same port and log directory.  The broker's
stderr goes to a file so that a failing test can show it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from compat_tests.loopback_ports import free_port

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_PROPERTIES = REPO_ROOT / "configs" / "server.properties"

START_TIMEOUT_S = 60.0 if os.environ.get("COMPAT_BROKER") == "kafka" else 30.0
STOP_TIMEOUT_S = 30.0

# Brokers currently running, so a failing test's report can carry their stderr.
LIVE: list[BrokerProcess] = []


REFERENCE_KAFKA_MODULE = "compat_tests.reference_kafka"


def broker_module() -> str:
    """pykafkad, or with COMPAT_BROKER=kafka a real Kafka broker as a reference (reference_kafka.py)."""
    choice = os.environ.get("COMPAT_BROKER", "pykafkad")
    if choice == "kafka":
        return REFERENCE_KAFKA_MODULE
    if choice != "pykafkad":
        raise BrokerError(f"COMPAT_BROKER={choice!r}: expected 'pykafkad' or 'kafka'")
    return "pykafkad"


class BrokerError(AssertionError):
    """The broker process did not start or stop as expected."""


class BrokerProcess:
    """One pykafkad broker subprocess, on a fixed port and log directory across restarts."""

    def __init__(self, log_dir: Path, overrides: dict[str, str] | None = None, name: str = "broker",
                 module: str | None = None) -> None:
        # ``module`` pins what runs (``compat_tests.reference_kafka`` for a real Kafka next to
        # pykafkad in one test); by default COMPAT_BROKER decides.
        self.module = module
        self.port = free_port()
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.overrides = dict(overrides or {})
        self.name = name
        # Keep the broker's own output outside log.dirs so it never looks like a partition.
        self.stderr_path = self.log_dir.parent / f"{self.log_dir.name}.stderr.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        # Variables added to the broker's environment (KAFKA_* for ``serve --from-env``).
        self.environment: dict[str, str] = {}

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        settings = {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.log_dir),
            "node.id": "1",
            **self.overrides,
        }
        cmd = [sys.executable, "-m", self.module or broker_module(), "serve", str(SERVER_PROPERTIES)]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self, timeout: float = START_TIMEOUT_S) -> BrokerProcess:
        if self.proc is not None and self.proc.poll() is None:
            raise BrokerError(f"{self.name} is already running (pid {self.proc.pid})")
        self.starts += 1
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.update(self.environment)
        with open(self.stderr_path, "ab") as err:
            err.write(f"\n===== start #{self.starts}: {' '.join(self.command())}\n".encode())
            err.flush()
            self.proc = subprocess.Popen(
                self.command(),
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
            )
        if self not in LIVE:
            LIVE.append(self)
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                raise BrokerError(
                    f"{self.name} exited with code {code} before accepting connections\n{self.stderr_tail()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.kill9()
        raise BrokerError(
            f"{self.name} did not accept connections on {self.port} within {timeout}s\n{self.stderr_tail()}"
        )

    def is_alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def accepts_connections(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2.0):
                return True
        except OSError:
            return False

    def stop(self, timeout: float = STOP_TIMEOUT_S, sig: int = signal.SIGTERM) -> int:
        """Graceful shutdown: send `sig`, wait, and assert exit code 0."""
        if self.proc is None or self.proc.poll() is not None:
            code = None if self.proc is None else self.proc.returncode
            raise BrokerError(f"{self.name} is not running (exit code {code})\n{self.stderr_tail()}")
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise BrokerError(
                f"{self.name} ignored signal {sig} for {timeout}s; killed\n{self.stderr_tail()}"
            ) from None
        finally:
            self._forget()
        if code != 0:
            raise BrokerError(f"{self.name} exited with code {code} after signal {sig}\n{self.stderr_tail()}")
        return code

    def kill9(self) -> None:
        """SIGKILL: no chance to flush or close anything."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self._forget()

    def restart(self, graceful: bool = True) -> BrokerProcess:
        """Stop (gracefully, or with SIGKILL) and start again on the same port and log directory."""
        if graceful:
            self.stop()
        else:
            self.kill9()
        return self.start()

    def close(self) -> None:
        """Teardown helper: stop if still running, without asserting anything."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._forget()

    def _forget(self) -> None:
        if self in LIVE:
            LIVE.remove(self)

    # -- diagnostics -----------------------------------------------------------------------------

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stderr_tail(self, lines: int = 80) -> str:
        tail = self.stderr_text().splitlines()[-lines:]
        return f"--- {self.name} stderr ({self.stderr_path}), last {len(tail)} lines ---\n" + "\n".join(tail)

    def stderr_size(self) -> int:
        try:
            return self.stderr_path.stat().st_size
        except FileNotFoundError:
            return 0

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        return self.log_dir / f"{topic}-{partition}"

    def __repr__(self) -> str:
        state = "running" if self.is_alive() else "stopped"
        return f"<BrokerProcess {self.name} {self.bootstrap} {state} log_dir={self.log_dir}>"
