"""Creating partition logs: which fsyncs happen, counted with strace on a child process.

Creating a topic must not cost an fsync per partition (a topic of thousands of partitions took
seconds), yet what it creates must become durable: the log dirs holding the new partition
directories are fsynced once per creation request, and each new log's own directory on its first
flush, which is when Kafka fsyncs a new log's directory too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Runs in the traced child: creates partitions through LogManager.open_new, then (by mode) appends
# one batch to each and flushes it, or reopens them as a restart would.  It exits without closing
# the logs: close fsyncs everything, which would hide what creation and flush do.
CHILD = """
import os, sys
from pathlib import Path
from pykafkad._rust_log import PartitionLog, encode_batch
from pykafkad.config import load_config
from pykafkad.log.manager import LogManager

mode, count, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
lm = LogManager(load_config(None, ["log.dirs=" + ",".join(dirs)]))
paths = lm.plan_new("t", range(count))
if mode.startswith("reopen"):
    logs = [PartitionLog(str(p), clean_shutdown=mode == "reopen") for p in paths]
else:
    logs = lm.open_new(paths, lm.settings_for({}))
if mode == "reopen-unclean":
    for plog in logs:
        plog.flush()
if mode == "flush":
    for plog in logs:
        plog.append(encode_batch([(None, b"v")], 1000))
        plog.flush()
        plog.flush()  # nothing new: no fsync at all
sys.stdout.flush()
os._exit(0)
"""

SYNC = re.compile(r"^\d+\s+(fsync|fdatasync)\(\d+<([^>]*)>\)")


def synced_paths(tmp_path: Path, mode: str, count: int, dirs: list[Path]) -> Counter[str]:
    """Paths the child fsyncs (fsync or fdatasync), with how often each."""
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed: run `make system-deps`", pytrace=False)
    out = tmp_path / f"strace-{mode}.txt"
    subprocess.run(
        ["strace", "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", str(out),
         sys.executable, "-c", CHILD, mode, str(count), *map(str, dirs)],
        cwd=REPO, check=True, timeout=120,
    )
    synced: Counter[str] = Counter()
    for line in out.read_text().splitlines():
        m = SYNC.match(line)
        assert m, f"unexpected strace line {line!r}"
        synced[m.group(2)] += 1
    return synced


def test_creating_partitions_fsyncs_each_log_dir_once(tmp_path: Path) -> None:
    one = (tmp_path / "one").resolve()
    assert synced_paths(tmp_path, "create", 40, [one]) == Counter({str(one): 1})
    a, b = (tmp_path / "a").resolve(), (tmp_path / "b").resolve()
    assert synced_paths(tmp_path, "create", 40, [a, b]) == Counter({str(a): 1, str(b): 1})


def test_first_flush_of_a_new_log_fsyncs_its_directory(tmp_path: Path) -> None:
    root = (tmp_path / "logs").resolve()
    synced = synced_paths(tmp_path, "flush", 5, [root])
    assert synced[str(root)] == 1, synced
    for p in range(5):
        part = root / f"t-{p}"
        # The directory once, the segment and the leader-epoch checkpoint the append wrote (one
        # small batch makes no index entry, so the index files are not created yet).
        assert synced[str(part)] == 1, synced
        for name in ("00000000000000000000.log", "leader-epoch-checkpoint"):
            assert synced[str(part / name)] == 1, (name, synced)
    assert sum(synced.values()) == 1 + 5 * 3, synced


def test_reopening_untouched_logs_fsyncs_nothing(tmp_path: Path) -> None:
    root = (tmp_path / "logs").resolve()
    synced_paths(tmp_path, "create", 10, [root])
    assert synced_paths(tmp_path, "reopen", 10, [root]) == Counter()


def test_first_flush_after_a_crash_fsyncs_each_directory(tmp_path: Path) -> None:
    # The killed process may have left directory entries unsynced (a rolled segment); opening
    # after a crash no longer fsyncs every directory, the first flush does.  It fsyncs the segments
    # recovery re-read too (read from the page cache, not known to be on disk), before the recovery
    # point may move past them.
    root = (tmp_path / "logs").resolve()
    synced_paths(tmp_path, "create", 10, [root])
    synced = synced_paths(tmp_path, "reopen-unclean", 10, [root])
    assert synced == Counter({str(root / f"t-{p}"): 1 for p in range(10)}
                             | {str(root / f"t-{p}" / f"{0:020d}.log"): 1 for p in range(10)})
