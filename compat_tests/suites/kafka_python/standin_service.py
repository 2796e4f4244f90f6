"""Stand-in for kafka-python's ``test/service.py``, which its sdist does not ship (written for pykafkad).

The runner copies this file to ``test/service.py``.  The suite's fixtures use two classes from it:

* ``ExternalService(host, port)``: a broker someone else runs (``KAFKA_URI`` set).  This is the only
  one the runner exercises: it starts the broker itself and points the suite at it.
* ``SpawnedService(args, env)``: a broker or ZooKeeper the fixtures start from a Kafka distribution
  (``KAFKA_ROOT``), with ``start``, ``stop``, ``wait_for(pattern, timeout)`` and ``dump_logs``.
  Kept small and working, for running the suite without ``KAFKA_URI``.
"""

from __future__ import annotations

import logging
import re
import subprocess
import threading
import time

log = logging.getLogger(__name__)


class ExternalService:
    """A service already running elsewhere: nothing to start, stop or show."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        log.info("using external service at %s:%s", host, port)

    def start(self) -> None:
        """Nothing to start."""

    def stop(self) -> None:
        """Nothing to stop."""

    def wait_for(self, pattern: str, timeout: float = 30) -> bool:
        """An external service's output is not visible; assume it is ready."""
        return True

    def dump_logs(self) -> None:
        log.info("external service %s:%s: no logs to show", self.host, self.port)


class SpawnedService:
    """A child process whose combined stdout and stderr are kept in memory, line by line."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.args = list(args)
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self._reader = threading.Thread(target=self._read, name="service-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self._lock:
                self._lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def wait_for(self, pattern: str, timeout: float = 30) -> bool:
        """True once a line of output matches ``pattern``; False after ``timeout`` s or if the child exits."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(regex.search(line) for line in self.lines()):
                return True
            if self.proc is None or self.proc.poll() is not None:
                return False
            time.sleep(0.1)
        return False

    def stop(self, timeout: float = 30) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._reader is not None:
            self._reader.join(timeout=5)

    def dump_logs(self) -> None:
        for line in self.lines():
            log.info("%s", line)
