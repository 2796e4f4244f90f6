"""The watch-event queue both metadata caches share: events are applied in the order posted, a
failing one is logged and skipped, waiters wake once their condition holds, and a post after
close is dropped without counting as pending."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

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


def test_a_waiter_sees_a_state_that_the_next_queued_event_undoes() -> None:
    """Queued events are applied without yielding between them; a waiter's condition is still
    checked after each one, so a topic shown and then deleted by the next event is seen."""
    state: list[str] = []

    async def apply(event: tuple) -> None:
        state.append(event[0])

    async def main() -> None:
        events = WatchEvents(apply, "test change", logging.getLogger("watch-events-test"))
        async with trio.open_nursery() as nursery:
            seen = trio.Event()

            async def waiter() -> None:
                await events.wait_for(lambda: state[-1:] == ["shown"])
                seen.set()

            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            for name in ["created", "shown", "gone", *[f"other {n}" for n in range(2000)]]:
                events.post(name)
            nursery.start_soon(events.run)
            with trio.fail_after(5):
                await seen.wait()
                await events.settled()
            assert state[-1] == "other 1999"
            events.close()

    trio.run(main)
