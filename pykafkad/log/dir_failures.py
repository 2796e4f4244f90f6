"""Which log dirs failed a write (a full disk, an I/O error): produce, ``/readyz``, the metrics and the log
read it from here.

Kafka takes a log dir offline for good on the first IOException and halts a broker whose only dir
failed.  pykafkad keeps the broker up instead: appends to partitions in a failed dir answer
KAFKA_STORAGE_ERROR (the log cuts a half-written batch back, so nothing is counted that was not
written), reads go on, and the dir is retried by the next append to it and by ``probe``, a small
write the replica manager makes every ``PROBE_INTERVAL_S`` while a dir is failed (a broker with
several log dirs takes a failed dir's replicas offline, so nothing else appends there): the first
write that succeeds clears the failure, without a restart.  A full dir clears only once it also has
room for a largest batch (``message.max.bytes``) again: a small append fitting in the last free
bytes does not make a full disk healthy, and the dir would flap between full and not with each
produce.  Listeners hear of each change (from any thread: checkpoints are written on worker threads).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Callable
from pathlib import Path

from prometheus_client import Gauge

log = logging.getLogger(__name__)

# Named as Prometheus's JMX exporter names Kafka's LogManager gauges.
OFFLINE_LOG_DIRS = Gauge("kafka_log_logmanager_offlinelogdirectorycount",
                         "Log dirs whose last write failed (a full disk or an I/O error)")
LOG_DIR_OFFLINE = Gauge("kafka_log_logmanager_logdirectoryoffline",
                        "1 while the log dir's last write failed, per log dir", ["logDirectory"])

# How often a failed log dir is probed with a small write while it stays failed.
PROBE_INTERVAL_S = 1.0
# The probe's file, in the log dir itself (not a partition directory: the log manager ignores it).
PROBE_FILE = ".log_dir_probe"

# errno ENOSPC (28) and EDQUOT (122) as Rust's io::Error prints them in a LogError's message.
_FULL_MARKS = ("(os error 28)", "(os error 122)")


def os_error_is_full(e: OSError) -> bool:
    """Whether an OSError of a checkpoint write says the filesystem (or a quota) is full."""
    return e.errno in (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(message: str) -> bool:
    """Whether a KAFKA_STORAGE_ERROR's message says the filesystem (or a quota) is full."""
    return any(mark in message for mark in _FULL_MARKS)


class LogDirFailures:
    """The log dirs whose last write failed, with why; one per broker."""

    def __init__(self, log_dirs: list[Path], room_bytes: int) -> None:
        self._failed: dict[Path, str] = {}
        self._room_bytes = room_bytes
        # Callers name a dir as configured or resolved: both mean the configured one.
        self._configured = {d.resolve(): d for d in log_dirs}
        # Told, with no argument, each time a dir fails or clears; may be called on a worker thread.
        self.listeners: list[Callable[[], None]] = []
        for d in log_dirs:
            LOG_DIR_OFFLINE.labels(str(d)).set(0)
        OFFLINE_LOG_DIRS.set(0)

    def failed(self) -> dict[Path, str]:
        """Each failed log dir with a one-line reason ("full: ..." or "failed: ...")."""
        return dict(self._failed)

    def any_failed(self) -> bool:
        return bool(self._failed)

    def write_failed(self, log_dir: Path, message: str, full: bool | None = None) -> None:
        """A write into ``log_dir`` failed with ``message`` (``full``: ENOSPC or EDQUOT; by default read
        from a LogError's message); WARN once per failure."""
        log_dir = self._as_configured(log_dir)
        full = is_disk_full(message) if full is None else full
        reason = f"full: {message}" if full else f"failed: {message}"
        new = log_dir not in self._failed
        if new:
            log.warning("log dir %s is %s; produce to its partitions answers KAFKA_STORAGE_ERROR until a "
                        "write succeeds again (reads go on)", log_dir, "full" if full else f"failing ({message})")
            LOG_DIR_OFFLINE.labels(str(log_dir)).set(1)
        self._failed[log_dir] = reason
        OFFLINE_LOG_DIRS.set(len(self._failed))
        if new:
            self._changed()

    def write_succeeded(self, log_dir: Path) -> None:
        """A write into ``log_dir`` succeeded: a failure it had is over (a full dir's once it has room)."""
        if not self._failed:
            return
        log_dir = self._as_configured(log_dir)
        reason = self._failed.get(log_dir)
        if reason is None or (reason.startswith("full") and _free_bytes(log_dir) < self._room_bytes):
            return
        del self._failed[log_dir]
        log.info("log dir %s takes writes again", log_dir)
        LOG_DIR_OFFLINE.labels(str(log_dir)).set(0)
        OFFLINE_LOG_DIRS.set(len(self._failed))
        self._changed()

    def probe(self) -> None:
        """Try each failed dir with a small write (and fsync), so a dir nothing appends to any more is
        seen to recover; blocks on the disk, so run it on a worker thread."""
        for log_dir in list(self._failed):
            path = log_dir / PROBE_FILE
            try:
                with open(path, "wb") as f:
                    f.write(b"\0")
                    f.flush()
                    os.fsync(f.fileno())
                path.unlink()
            except OSError as e:
                with contextlib.suppress(OSError):
                    path.unlink()  # not left behind half-written
                self.write_failed(log_dir, str(e), full=os_error_is_full(e))
            else:
                self.write_succeeded(log_dir)

    def configured(self, log_dir: Path) -> Path:
        """``log_dir`` as configured in ``log.dirs`` (callers may hold it resolved)."""
        return self._as_configured(log_dir)

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()

    def _as_configured(self, log_dir: Path) -> Path:
        return self._configured.get(log_dir.resolve(), log_dir)


def _free_bytes(log_dir: Path) -> int:
    """Bytes an unprivileged writer may still use on ``log_dir``'s filesystem (0 if it cannot be asked)."""
    try:
        st = os.statvfs(log_dir)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize
