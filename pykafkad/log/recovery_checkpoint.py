"""Kafka's ``recovery-point-offset-checkpoint``: one file per log dir naming, for each partition in it,
the offset below which its log is fsynced (its recovery point).

After a crash only the segments from a partition's recovery point on are recovered; a partition the
file does not name is recovered whole, as Kafka does.  The layout is Kafka's: a version line ``0``, an
entry count, then one ``topic partition offset`` line per partition.  Written atomically (temporary
file, fsync, rename, fsync of the log dir), so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"
VERSION = 0


def read_recovery_points(log_dir: Path) -> dict[tuple[str, int], int]:
    """The recovery points checkpointed in ``log_dir``; empty (recover everything) if the file is missing
    or unreadable."""
    path = log_dir / RECOVERY_POINT_FILE
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    except OSError as e:
        log.warning("%s unreadable (%s): every partition of %s is recovered in full", path, e, log_dir)
        return {}
    try:
        if int(lines[0]) != VERSION:
            raise ValueError(f"version {lines[0]!r}")
        count = int(lines[1])
        points: dict[tuple[str, int], int] = {}
        for line in lines[2:2 + count]:
            topic, partition, offset = line.split()
            points[(topic, int(partition))] = int(offset)
        if len(points) != count:
            raise ValueError(f"{len(points)} entries, header says {count}")
        return points
    except (ValueError, IndexError) as e:
        log.warning("%s is malformed (%s): every partition of %s is recovered in full", path, e, log_dir)
        return {}


def write_recovery_points(log_dir: Path, points: dict[tuple[str, int], int]) -> None:
    """Replace ``log_dir``'s checkpoint with ``points`` (raises OSError)."""
    path = log_dir / RECOVERY_POINT_FILE
    tmp = log_dir / (RECOVERY_POINT_FILE + ".tmp")
    body = "".join(f"{t} {p} {o}\n" for (t, p), o in sorted(points.items()))
    with open(tmp, "w") as f:
        f.write(f"{VERSION}\n{len(points)}\n{body}")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(log_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
