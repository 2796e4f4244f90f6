"""The console's searches: at most two scan at once (a third is refused with a message saying to
wait), and a search pushed out of the kept list while it scans is cancelled rather than left
reading in the background."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
import trio
import trio.testing

from pykafkad.observability import record_browser
from pykafkad.observability.record_browser import BrowseError, Searches


class _GatedLog:
    """A log whose reads wait until the test opens the gate."""

    log_start_offset = 0

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.reads = 0

    def last_stable_offset(self, high_watermark: int) -> int:
        return high_watermark

    def read(self, position: int, max_bytes: int) -> bytes:
        self.reads += 1
        assert self.gate.wait(10), "the test never opened the gate"
        return b""


def _chunk(search: Any, replica: Any, position: int) -> tuple[list[dict[str, Any]], int]:
    """A chunk of 100 offsets with nothing in them, read once the gate is open."""
    replica.log.read(position, 0)
    return [], position + 100

    def aborted_transactions(self, start: int, end: int) -> list[Any]:
        return []


def _broker(log: _GatedLog) -> Any:
    replica = SimpleNamespace(log=log, high_watermark=1000)
    return SimpleNamespace(topic=lambda name: SimpleNamespace(partitions=[SimpleNamespace(leader=1)]),
                           replicas=SimpleNamespace(get=lambda topic, partition: replica))


def test_two_searches_at_once_and_an_evicted_one_is_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    log = _GatedLog()
    searches = Searches(_broker(log))
    monkeypatch.setattr(record_browser, "_scan_chunk", _chunk)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(searches.run)
            first = searches.start("t", 0, None, None, None, "needle", None)
            second = searches.start("t", 0, None, None, None, "needle", None)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(BrowseError, match="2 searches are running already; wait for one to finish"):
                searches.start("t", 0, None, None, None, "needle", None)

            log.gate.set()
            while not (first.done and second.done):
                await trio.sleep(0.01)
            assert (first.scanned_to, second.scanned_to) == (1000, 1000)

            # Only one kept: a new search pushes out the running one, which stops once the chunk it is
            # reading is in (a thread cannot be stopped mid-read), 100 offsets of its 1,000.
            monkeypatch.setattr(record_browser, "KEPT_SEARCHES", 1)
            log.gate.clear()
            pushed = searches.start("t", 0, None, None, None, "needle", None)
            await trio.testing.wait_all_tasks_blocked()
            newest = searches.start("t", 0, None, None, None, "needle", None)
            assert list(searches.searches) == [newest.id]
            log.gate.set()
            while not (pushed.done and newest.done):
                await trio.sleep(0.01)
            assert pushed.scanned_to == 100 and newest.scanned_to == 1000
            nursery.cancel_scope.cancel()

    trio.run(main)
