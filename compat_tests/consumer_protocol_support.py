"""Consumer-group members on the KIP-848 protocol, run as processes a test can start, stop and kill:
the Java consumer (``java/ConsumerProtocolMember.java``) and librdkafka
(``rdkafka_consumer_member.py``).  Each prints its rebalances and records; ``Member`` follows them,
so a test waits on what a member owns or has consumed, not on time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from compat_tests.java_tools import java_executable, java_program

JAVA_MEMBER = Path(__file__).resolve().parent / "java" / "ConsumerProtocolMember.java"
RDKAFKA_MEMBER = "compat_tests.rdkafka_consumer_member"
WAIT_S = 60.0
# Short heartbeats and sessions so that rebalances and a crashed member's removal take seconds.
CONSUMER_PROTOCOL_OVERRIDES = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "6000",
    "auto.create.topics.enable": "false",
}


class Member:
    """One member process and what it said."""

    def __init__(self, client: str, bootstrap: str, group: str, subscription: str,
                 settings: dict[str, str] | None = None, programs: tuple[Path, str] = (JAVA_MEMBER, RDKAFKA_MEMBER),
                 mode: tuple[str, ...] = ()) -> None:
        """``programs``: the Java single-file program and the Python module to run (a consumer-group
        member by default); ``mode``: arguments they take after the subscription."""
        extra = [*mode, *(f"{k}={v}" for k, v in (settings or {}).items())]
        java_source, rdkafka_module = programs
        if client == "java":
            command = [java_executable(), "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                       *java_program(java_source), bootstrap, group, subscription, *extra]
        else:
            command = [sys.executable, "-m", rdkafka_module, bootstrap, group, subscription, *extra]
        self.client = client
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True,
                                        cwd=Path(__file__).resolve().parent.parent, env=os.environ.copy())
        self._stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.lines.append("<exit>")
            self.changed.notify_all()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr = (self._stderr + [line])[-40:]

    # -- what it said ----------------------------------------------------------------------------

    def owned(self) -> set[str]:
        """The partitions it owns now: what its rebalance callbacks added and did not take back."""
        owned: set[str] = set()
        with self.changed:
            for line in self.lines:
                kind, _, rest = line.partition(" ")
                parts = {p for p in rest.split(",") if p}
                if kind == "assigned":
                    owned |= parts
                elif kind == "revoked":
                    owned -= parts
        return owned

    def values(self) -> list[str]:
        with self.changed:
            return [line.split(" ", 4)[4] for line in self.lines if line.startswith("record ")]

    def committed_values(self) -> set[str]:
        """The values it printed before its last commit."""
        with self.changed:
            last = max((i for i, line in enumerate(self.lines) if line == "committed"), default=0)
            return {line.split(" ", 4)[4] for line in self.lines[:last] if line.startswith("record ")}

    def wait_for(self, what: str, condition: Callable[[], bool], timeout_s: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1] == "<exit>" and not condition()):
                    raise AssertionError(f"{self.client} member: {what} did not happen; it said "
                                         f"{self.lines[-15:]}\nstderr: {''.join(self._stderr[-15:])}")
                self.changed.wait(min(left, 0.5))

    # -- ending it -------------------------------------------------------------------------------

    def leave(self) -> None:
        """Close its stdin: it leaves the group and exits."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.wait_for("leaving the group", lambda: "closed" in self.lines)
        self.process.wait(timeout=WAIT_S)

    def kill9(self) -> None:
        self.process.kill()
        self.process.wait(timeout=WAIT_S)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT_S)


def wait_until(what: str, condition: Callable[[], bool], timeout_s: float = WAIT_S) -> None:
    """For conditions over several members: poll their output (each line wakes its own member only)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout_s} s")
        time.sleep(0.05)
