"""The watch-event queue both metadata caches share: events are applied in the order posted, a
failing one is logged and skipped, waiters wake once their condition holds, and a post after
close is dropped without counting as pending."""

from __future__ import annotations

import logging

import pytest
import trio

from pykafkad.metadata.watch_events import WatchEvents


def test_events_apply_in_order_and_a_failure_does_not_stop_the_queue(caplog: pytest.LogCaptureFixture) -> None:
    applied: list[int] = []

    async def apply(event: tuple) -> None:
        if event[0] == 2:
            raise ValueError("unreadable node")
        await trio.sleep(0.001 * (5 - event[0]))  # slower first events must still come first
        applied.append(event[0])

    async def main() -> None:
        events = WatchEvents(apply, "test change", logging.getLogger("watch-events-test"))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(events.run)
            for n in range(5):
                events.post(n)
            await events.wait_for(lambda: 3 in applied)
            assert applied == [0, 1, 3]
            await events.settled()
            assert applied == [0, 1, 3, 4]
            events.close()
        events.post(9)  # a watch firing after the cache stopped
        with trio.move_on_after(1) as waited:
            await events.settled()
        assert not waited.cancelled_caught

    with caplog.at_level(logging.ERROR, logger="watch-events-test"):
        trio.run(main)
    assert "applying test change (2,) failed" in caplog.text
