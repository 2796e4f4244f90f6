"""A follower told its fetch offset is out of range (past the leader's log end) truncates to the
leader's high watermark and fetches from there, whatever its own older high watermark says.  It
used to truncate only down to the larger of the two, which left a follower with a stale high
watermark above the leader's log end fetching the same offset forever, out of the ISR for good."""

from __future__ import annotations

from pathlib import Path

import trio

from pykafkad._rust_log import PartitionLog
from pykafkad.config import load_config
from pykafkad.replica.partition import Partition
from pykafkad.replica.replica_fetcher import ReplicaFetcher
from rust_log.tests_py.test_smoke import batch
from wire.error_codes import ErrorCode


def test_out_of_range_past_the_leaders_end_truncates_to_the_leaders_high_watermark(tmp_path: Path) -> None:
    log = PartitionLog(str(tmp_path / "t-0"))
    for i in range(6):
        log.append(batch([f"v{i}".encode()]), 3)
    assert log.log_end_offset == 6
    partition = Partition("t", 0, log, local_id=2)
    partition.make_follower(1, 5, [1, 2], [1])
    partition.high_watermark = 6  # learnt from an earlier leader that had all six
    fetcher = ReplicaFetcher(1, load_config(None, []), lambda _id: None)
    answer = {"error_code": ErrorCode.OFFSET_OUT_OF_RANGE, "high_watermark": 4, "log_start_offset": 0,
              "records": b""}
    trio.run(fetcher._apply, partition, 6, answer)
    assert log.log_end_offset == 4
    assert partition.high_watermark == 4
