"""The ``.lock`` file of each log dir: one broker process per data directory, as Kafka enforces.

A broker holds an exclusive ``flock`` on ``<log dir>/.lock`` from before it reads or writes
anything in the directory until it has closed its logs.  A second broker pointed at the same
directory fails to take the lock and stops without touching the directory.  The kernel drops the
lock when the process dies, so a broker killed with ``kill -9`` leaves no stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = ".lock"


class LogDirInUse(Exception):
    """Another process holds a log dir's lock."""


class LogDirLocks:
    """The locks this broker holds, one per log dir; ``release`` drops them all."""

    def __init__(self) -> None:
        self._fds: list[int] = []

    @classmethod
    def acquire(cls, log_dirs: list[Path]) -> LogDirLocks:
        """Lock every log dir (creating missing ones), or raise LogDirInUse/OSError holding none."""
        locks = cls()
        try:
            for d in log_dirs:
                locks._lock(d)
        except BaseException:
            locks.release()
            raise
        return locks

    def _lock(self, log_dir: Path) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(log_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LogDirInUse(
                f"log dir {log_dir} is in use by another broker ({log_dir / LOCK_FILE} is locked); "
                f"stop that broker or give this one other log.dirs"
            ) from None
        except OSError:
            os.close(fd)
            raise
        self._fds.append(fd)

    def release(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
