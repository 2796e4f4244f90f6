"""A ``pykafkad <service>`` (``registry``, ``rest``) run on its own as a process against a cluster,
for the tests of the standalone HTTP services: started on a free port, waited for until it
answers, stopped with SIGTERM, and its log checked for tracebacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from compat_tests.broker_process import REPO_ROOT, free_port
from compat_tests.storage_support import wait_for


class ServiceProcess:
    service = ""

    def __init__(self, bootstrap: str, log_path: Path, args: Sequence[str] = (), scheme: str = "http") -> None:
        self.url = f"{scheme}://127.0.0.1:{free_port()}"
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "pykafkad", self.service, "--bootstrap-server",
                                      bootstrap, "--listener", self.url, *args],
                                     cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                                     stdout=self._log, stderr=self._log)
        wait_for(f"the standalone {self.service} answers", lambda: self.proc.poll() is None and self.answers(),
                 timeout=60)

    def answers(self) -> bool:
        """Whether the service answers requests yet."""
        raise NotImplementedError

    def stop(self) -> int:
        """SIGTERM, and the exit code; the log must hold no traceback."""
        try:
            self.proc.send_signal(signal.SIGTERM)
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._log.close()
            assert b"Traceback" not in self.log_path.read_bytes(), self.log_path.read_text()[-3000:]
