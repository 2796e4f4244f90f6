"""Reading and writing the coordinators' internal topics (``__consumer_offsets``,
``__transaction_state``): whole partitions replayed record by record, each record with what its
batch says of it (producer, transactional, a transaction marker), and batches built by the Rust
core.  Touches nothing but the log, so a replay runs on a worker thread."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pykafkad import _rust_log

if TYPE_CHECKING:
    from pykafkad._rust_log import PartitionLog

COMMIT_MARKER = 1


@dataclass(frozen=True)
class LogRecord:
    """One record of an internal topic partition."""

    key: bytes | None
    value: bytes | None
    producer_id: int = -1
    transactional: bool = False
    # A transaction marker (control record): ``commit`` says which.
    control: bool = False
    offset: int = -1

    @property
    def commit(self) -> bool:
        """For a marker: COMMIT (its key is version and type, type 1 COMMIT)."""
        return self.key is not None and len(self.key) >= 4 and self.key[3] == COMMIT_MARKER


def encode_batch(records: list[tuple[bytes | None, bytes | None]], timestamp_ms: int,
                 producer: tuple[int, int] | None = None) -> bytes:
    """One uncompressed magic-2 batch of ``records``; with ``producer`` (id, epoch), a transactional
    batch without sequence, as a coordinator writes transactional offsets."""
    if producer is None:
        return _rust_log.encode_batch(records, timestamp_ms)
    return _rust_log.encode_batch(records, timestamp_ms, producer_id=producer[0], producer_epoch=producer[1],
                                  transactional=True)


def read_partition(plog: PartitionLog, chunk_bytes: int = 1 << 20) -> Iterator[LogRecord]:
    """Every record of one internal topic partition, oldest first, markers included."""
    offset = plog.log_start_offset
    end = plog.log_end_offset
    while offset < end:
        data = plog.read(offset, chunk_bytes)
        if not data:
            break
        next_offset = offset
        batches: list[tuple[int, int, int, bool, bool]] = []
        for h in _rust_log.decode_batch_headers(data):
            next_offset = max(next_offset, int(h["last_offset"]) + 1)
            batches.append((int(h["base_offset"]), int(h["last_offset"]), int(h["producer_id"]),
                            bool(h["is_transactional"]), bool(h["is_control"])))
        i = 0
        for rec_offset, _ts, key, value, _headers in _rust_log.decode_batches(data):
            while i < len(batches) and batches[i][1] < rec_offset:
                i += 1
            if rec_offset < offset or i >= len(batches):
                continue
            _, _, producer_id, transactional, control = batches[i]
            yield LogRecord(key, value, producer_id, transactional, control, rec_offset)
        if next_offset <= offset:
            break
        offset = next_offset
