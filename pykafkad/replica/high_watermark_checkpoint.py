"""The high watermark checkpoint: ``replication-offset-checkpoint`` in each log directory.

Kafka's file and format, so its tools and operators read it as they know it: a version line
(0), a count line, then ``<topic> <partition> <high watermark>`` per partition of that
directory.  The replica manager writes it every ``replica.high.watermark.checkpoint.interval.ms``
and at a clean shutdown, and a partition starts from its checkpointed high watermark, so a
restarted leader serves what was committed before without waiting for its followers.  A file is
replaced whole (written aside, synced, renamed), so a crash leaves the old or the new one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "replication-offset-checkpoint"
VERSION = 0

HighWatermarks = dict[tuple[str, int], int]


def read_checkpoint(log_dir: Path) -> HighWatermarks:
    """The high watermarks checkpointed in ``log_dir``; none when there is no file.  A file that does not
    parse is reported and ignored: every partition then starts from 0, which is always safe."""
    path = log_dir / FILE_NAME
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    try:
        if int(lines[0]) != VERSION:
            raise ValueError(f"version {lines[0]}, expected {VERSION}")
        count = int(lines[1])
        entries: HighWatermarks = {}
        for line in lines[2:2 + count]:
            topic, partition, offset = line.split(" ")
            entries[(topic, int(partition))] = int(offset)
        if len(entries) != count:
            raise ValueError(f"{len(entries)} entries, expected {count}")
        return entries
    except (ValueError, IndexError) as e:
        log.warning("%s is malformed (%s); high watermarks start from 0", path, e)
        return {}


def write_checkpoint(log_dir: Path, entries: HighWatermarks) -> None:
    """Replace ``log_dir``'s checkpoint with ``entries``, durably (runs on a worker thread)."""
    path = log_dir / FILE_NAME
    tmp = path.with_name(FILE_NAME + ".tmp")
    lines = [str(VERSION), str(len(entries))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(entries.items())]
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(log_dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
