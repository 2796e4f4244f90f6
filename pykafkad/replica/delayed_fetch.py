"""A parked fetch that the log answers itself, as Kafka's DelayedFetch is completed by the thread
that makes the records readable: a follower's by the leader's append that brings the records it
waits for, a consumer's by the move of the high watermark over them.

On a leader with followers, each acks=all record used to wait, before any follower had it, for the
event loop to wake each follower's parked fetch in turn, read the partition again, encode the answer
and write it: a few hundred microseconds of cold Python per follower, one after the other
(benchmarks/NOTES.md, "The record's path on three brokers, timed again"); then, once the followers
had it, as long again for the consumer's.  Now a fetch that parks leaves, on each partition it is
caught up on (a few at most), its answer for that partition encoded by the codec but for the record
bytes (and, for a consumer, the watermarks).  The Rust log writes that answer to the fetcher's socket
before it returns: from the append that starts at a follower's fetch offset, in the leader epoch
checked; from the high-watermark move past a consumer's fetch offset, with the records below the new
high watermark and the new watermarks.  The fetch's task, woken by the same event, then only closes
the wait and records in the fetch session what was told.

Only where that one partition is the whole answer: a follower's incremental fetch (its answer names
only what changed); a consumer's incremental fetch, or its full fetch of a single partition
(read_committed too, but not over a range holding an aborted transaction).  And only on a plain
socket, with ``fetch.min.bytes`` (``replica.fetch.min.bytes``) of 1, no client quota, and no leader
replication throttle on the partition.  Anything else, and an answer the socket takes none of at
once, is answered by the event loop as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pykafkad._rust_log import DelayedFetch as _WaitingAnswer
from pykafkad.replica.partition import QUIET, FetchedData
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.replica.partition import Partition
    from pykafkad.replica.replica_manager import FetchEntry

# The partitions one fetch leaves an answer on: an incremental request names those that moved, and
# each costs an encoding on every park.
MAX_WAITING_PARTITIONS = 4

# An answer around the place of its records: (the frame before the records' length, the frame after
# them, and for a consumer's where the head holds the high watermark and then the last stable offset).
Template = tuple[bytes, bytes, int]


class DelayedFetch:
    """One fetch's answers left with the logs; ``template(i, data)`` encodes entry ``i``'s one-partition
    answer with ``data``'s watermarks around the place of its records (None: not possible for it), and
    ``news(i, data)`` says whether that answer would tell the fetcher something it was not told yet
    (its watermarks: a fetch of one partition always has news)."""

    __slots__ = ("_fd", "_template", "_news", "_follower", "_read_committed", "_waiting", "told", "sent")

    def __init__(self, fd: int, template: Callable[[int, FetchedData], Template | None],
                 news: Callable[[int, FetchedData], bool], follower: bool, read_committed: bool = False) -> None:
        self._fd = fd
        self._template = template
        self._news = news
        self._follower = follower
        self._read_committed = read_committed
        self._waiting: _WaitingAnswer | None = None
        # What each entry's answer left with the logs says, by entry.
        self.told: dict[int, FetchedData] = {}
        # Once the log answered: (entry, the records' length, the bytes the socket did not take, and
        # the high watermark and last stable offset it wrote into a consumer's answer, else -1).
        self.sent: tuple[int, int, bytes, int, int] | None = None

    def wait_on(self, targets: Sequence[tuple[Partition, FetchEntry] | FetchedData],
                results: Sequence[FetchedData], max_bytes: int) -> bool:
        """Leave answers on the partitions this pass read nothing from and found caught up; whether
        any was left (``close`` must then end the wait, also when this raises).

        The log answers with one partition, so a pass where another partition has news (new
        watermarks, which the broker's answer would carry along with the records that end the wait)
        leaves an answer only on the partition with the news, and only when it is the one."""
        self.told = {}
        candidates = []
        with_news = []
        for i, (target, data) in enumerate(zip(targets, results, strict=True)):
            if data is QUIET:
                continue
            if isinstance(target, FetchedData) or data.error != ErrorCode.NONE or data.records \
                    or data.diverging_epoch is not None:
                return False
            candidates.append(i)
            if self._news(i, data):
                with_news.append(i)
        if len(with_news) > 1:
            return False
        for i in with_news or candidates[:MAX_WAITING_PARTITIONS]:
            data = results[i]
            template = self._template(i, data)
            if template is None:
                break
            if self._waiting is None:
                self._waiting = _WaitingAnswer(self._fd)
            partition, entry = targets[i]  # type: ignore[misc]
            limit = max(0, min(entry.max_bytes, max_bytes))
            if self._follower:
                partition.answer_on_append(self._waiting, i, template, entry.fetch_offset, limit)
            else:
                partition.answer_on_high_watermark(self._waiting, i, template, entry.fetch_offset, limit,
                                                   self._read_committed)
            self.told[i] = data
        return self._waiting is not None

    def close(self) -> bool:
        """End the wait; True when the log answered the fetch (``sent`` says with what)."""
        waiting, self._waiting = self._waiting, None
        if waiting is None:
            return False
        sent = waiting.close()
        if sent is None:
            return False
        self.sent = sent
        return True
