"""The broker's own log lines (not its data logs): levels per logger, their format, where they go,
and how often one connection may warn.

Set in ``server.properties`` as Kafka sets them in ``log4j.properties``, with log4j's key names:
``log4j.rootLogger=INFO`` and ``log4j.logger.<logger>=<LEVEL>`` (``pykafkad.replica=DEBUG``,
``kafka.authorizer.logger=WARN``; TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF).  pykafkad's own
keys choose the form: ``logging.format`` (``text``, or ``json`` for one JSON object per line) and
``logging.file`` (a file rotated at ``logging.file.max.bytes`` keeping ``logging.file.backups`` old
ones, besides stderr).  kazoo, the ZooKeeper client, logs warnings and errors only unless
``log4j.logger.kazoo=INFO`` (or DEBUG) asks for its connection chatter.

Warnings about one client's connection (garbage frames, a failed handshake) are limited to
``WARNINGS_PER_WINDOW`` per peer address each ``WINDOW_S`` seconds; the next line after a quiet
spell says how many were left out, so a misbehaving client cannot flood the log.
"""

from __future__ import annotations

import collections
import json
import logging
import logging.handlers
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

LOG4J_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
                "WARNING": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL,
                "OFF": logging.CRITICAL + 10}
LOGGER_PREFIX = "log4j.logger."
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
WINDOW_S = 10.0
WARNINGS_PER_WINDOW = 5
# Libraries whose INFO lines are their own chatter (kazoo: every ZooKeeper connect and close),
# held at this level unless ``log4j.logger.<name>`` asks for another.
QUIET_LIBRARIES = {"kazoo": logging.WARNING}
# The loggers whose warnings are about one peer (its address is the record's first argument).
PER_CONNECTION_LOGGERS = ("pykafkad.network.connection", "pykafkad.network.server")


def log4j_level(key: str, value: str) -> int:
    """A log4j level (``INFO``, or ``INFO, stdout`` as rootLogger writes it); ValueError names the key."""
    name = value.split(",")[0].strip().upper()
    if name not in LOG4J_LEVELS:
        raise ValueError(f"{key}={value!r}: not a level; use one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF")
    return LOG4J_LEVELS[name]


@dataclass
class LoggingSettings:
    root_level: int | None = None
    levels: dict[str, int] = field(default_factory=dict)
    format: str = "text"
    file: Path | None = None
    file_max_bytes: int = 100 * 1024 * 1024
    file_backups: int = 10


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and the exception, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
                 "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class RecentLines(logging.Handler):
    """The last ``size`` formatted lines, for the admin API's ``/api/logs``."""

    def __init__(self, size: int = 500) -> None:
        super().__init__()
        self.lines: collections.deque[dict[str, str]] = collections.deque(maxlen=size)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(json.loads(JsonFormatter().format(record)))
        except Exception:  # noqa: BLE001 - a line that cannot be kept must not break logging
            self.handleError(record)


RECENT = RecentLines()


class PerPeerWarningLimit(logging.Filter):
    """At most ``WARNINGS_PER_WINDOW`` warnings per peer per window; then a count of those left out."""

    def __init__(self, clock=time.monotonic) -> None:  # noqa: ANN001 - a monotonic clock, for tests
        super().__init__()
        self.clock = clock
        self._windows: dict[str, tuple[float, int]] = {}  # peer -> (window start, lines in it)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING or not record.args or not isinstance(record.args, tuple):
            return True
        # Per address, not per connection: a client that reconnects to warn again is the same client.
        peer = str(record.args[0]).rpartition(":")[0] or str(record.args[0])
        now = self.clock()
        start, count = self._windows.get(peer, (now, 0))
        if now - start >= WINDOW_S:
            suppressed = count - WARNINGS_PER_WINDOW
            start, count = now, 0
            if suppressed > 0:
                record.msg = f"{record.msg} ({suppressed} similar lines about %s left out in the last window)"
                record.args = (*record.args, peer)
        count += 1
        self._windows[peer] = (start, count)
        if len(self._windows) > 10_000:
            self._windows = {p: w for p, w in self._windows.items() if now - w[0] < WINDOW_S}
        return count <= WARNINGS_PER_WINDOW


def configure(settings: LoggingSettings, default_level: int) -> None:
    """Install the handlers, format and levels (replacing any earlier set-up)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    formatter: logging.Formatter = JsonFormatter() if settings.format == "json" else logging.Formatter(TEXT_FORMAT)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if settings.file is not None:
        settings.file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(
            settings.file, maxBytes=settings.file_max_bytes, backupCount=settings.file_backups, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.addHandler(RECENT)
    root.setLevel(settings.root_level if settings.root_level is not None else default_level)
    logging.addLevelName(5, "TRACE")
    for name, level in QUIET_LIBRARIES.items():
        logging.getLogger(name).setLevel(settings.levels.get(name, level))
    for name, level in settings.levels.items():
        logging.getLogger(name).setLevel(level)
    limit = PerPeerWarningLimit()
    for name in PER_CONNECTION_LOGGERS:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, PerPeerWarningLimit)]:
            logger.removeFilter(old)
        logger.addFilter(limit)
