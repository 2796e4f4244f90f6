"""Helpers shared by the storage proof tests (retention, compaction, compression policy,
recovery, flush policy, many partitions).

* `module_broker`: a dedicated broker with the storage overrides a test module needs
  (short retention/cleaner intervals, tiny segments), started once per module.
* `wait_for`: poll a condition until it holds or a generous deadline passes: tests never
  sleep a fixed time and never assert on how long something took.
* On-disk views of a partition directory: segment base offsets, sizes, and every record or
  batch header decoded from the `.log` files with the Rust codec.
* `alter_topic`: IncrementalAlterConfigs SET through confluent-kafka's AdminClient.
* `raw_fetch`: one Fetch at an exact protocol version over a raw socket.
* `proc_stats`: open file descriptors and resident memory of a broker process.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from compat_tests.broker_process import BrokerProcess
from compat_tests.raw_kafka import API_FETCH, RawConnection
from pykafkad._rust_log import decode_batch_headers, decode_batches

T = TypeVar("T")

ADMIN_TIMEOUT_S = 30.0
WAIT_TIMEOUT_S = 60.0


def module_broker(
    factory: pytest.TempPathFactory, name: str, overrides: dict[str, str]
) -> Iterator[BrokerProcess]:
    """Start a broker for one test module; yield it; stop it (or restart it if a test killed it)."""
    b = BrokerProcess(factory.mktemp(name) / "logs", {"auto.create.topics.enable": "false", **overrides}, name=name)
    b.start()
    yield b
    b.close()


def ensure_running(b: BrokerProcess) -> BrokerProcess:
    """A module broker that an earlier test left dead is started again."""
    if not b.is_alive():
        b.kill9()
        b.start()
    return b


def wait_for(what: str, check: Callable[[], T], timeout: float = WAIT_TIMEOUT_S, interval: float = 0.2) -> T:
    """Call `check` until it returns something truthy (returned); fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what} (last check gave {last!r})")
        time.sleep(interval)


# ----------------------------------------------------------------------------------------------------
# On disk
# ----------------------------------------------------------------------------------------------------


def segment_files(part_dir: Path) -> list[Path]:
    """The `.log` segment files of a partition directory, oldest first."""
    return sorted(part_dir.glob("*.log"))


def segment_bases(part_dir: Path) -> list[int]:
    """Base offsets of the segments, from the file names (`%020d.log`)."""
    return [int(p.stem) for p in segment_files(part_dir)]


def log_bytes(part_dir: Path) -> int:
    return sum(p.stat().st_size for p in segment_files(part_dir))


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:  # deleted by retention or swapped by the cleaner meanwhile
        return b""


def disk_records(part_dir: Path) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every non-control record in the segment files, oldest first."""
    out = []
    for path in segment_files(part_dir):
        data = _read(path)
        controls = {h["base_offset"] for h in decode_batch_headers(data) if h["is_control"]}
        batch_of: dict[int, int] = {}
        for h in decode_batch_headers(data):
            for o in range(int(h["base_offset"]), int(h["last_offset"]) + 1):
                batch_of[o] = int(h["base_offset"])
        for offset, _ts, key, value, _headers in decode_batches(data):
            if batch_of.get(offset) not in controls:
                out.append((offset, key, value))
    return out


def disk_batches(part_dir: Path) -> list[dict[str, int | bool]]:
    """Header fields of every batch in the segment files, oldest first."""
    out: list[dict[str, int | bool]] = []
    for path in segment_files(part_dir):
        out += decode_batch_headers(_read(path))
    return out


# ----------------------------------------------------------------------------------------------------
# Admin and raw protocol
# ----------------------------------------------------------------------------------------------------


def alter_topic(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    """IncrementalAlterConfigs: SET each of `configs` on the topic (others unchanged)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=entries)
    admin.incremental_alter_configs([resource])[resource].result(ADMIN_TIMEOUT_S)


def describe_topic(bootstrap: str, topic: str) -> dict[str, Any]:
    """DescribeConfigs of a topic: {name: ConfigEntry}."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return admin.describe_configs([resource])[resource].result(ADMIN_TIMEOUT_S)


def raw_fetch(
    port: int, topic: str, offset: int, *, partition: int = 0, version: int = 12, max_bytes: int = 1_048_576
) -> dict[str, Any]:
    """One Fetch of one partition at protocol `version`; returns the partition's response dict."""
    body = {
        "replica_id": -1,
        "max_wait_ms": 50,
        "min_bytes": 1,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": partition, "fetch_offset": offset, "partition_max_bytes": max_bytes}
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    with RawConnection(port) as conn:
        response = conn.request(API_FETCH, version, body)
    [t] = response["responses"]
    [p] = t["partitions"]
    return p


# ----------------------------------------------------------------------------------------------------
# Process
# ----------------------------------------------------------------------------------------------------


def proc_stats(pid: int) -> tuple[int, int]:
    """(open file descriptors, resident set size in KiB) of a running process."""
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    rss_kb = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kb = int(line.split()[1])
    return fds, rss_kb


SMALL_FS_SIZE = "8m"


def mounted_small_fs(tmp_path: Path) -> Iterator[Path]:
    """For a fixture: an 8 MB tmpfs mounted under tmp_path, for a log dir that fills; unmounted at
    teardown.  Skips where mounting is not allowed (it needs root, as CI runs)."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_FS_SIZE}", "tmpfs", str(mnt)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs as a full log dir (needs root): {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)
