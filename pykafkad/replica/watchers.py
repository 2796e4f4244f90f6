"""Delayed operations' wake-ups: a fetch long-polling several partitions, or a produce waiting for its
high watermark, parks one event on each partition it waits for; that partition's appends and
high-watermark moves set it (Kafka's purgatory keyed by partition, without timers: Trio's cancel
scopes give the timeouts).

Park *before* looking: whatever happens between the look and the wait (an append finishing on a
worker thread) then still wakes the waiter.
"""

from __future__ import annotations

from collections.abc import Iterable

import trio


class Watchers:
    """The events parked on one partition (or on the broker, for shutdown)."""

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events: set[trio.Event] = set()

    def wake_all(self) -> None:
        events, self._events = self._events, set()
        for event in events:
            event.set()

    def waiting(self) -> bool:
        """Whether anyone is parked here."""
        return bool(self._events)

    def add(self, event: trio.Event) -> None:
        self._events.add(event)

    def discard(self, event: trio.Event) -> None:
        self._events.discard(event)


class Waiter:
    """One parked event; ``wait`` returns when any watcher it is parked on wakes, or at the timeout."""

    def __init__(self, event: trio.Event) -> None:
        self._event = event

    async def wait(self, timeout_s: float) -> None:
        with trio.move_on_after(max(0.0, timeout_s)):
            await self._event.wait()


class parked_on:  # noqa: N801 - used as a function: ``with parked_on(watchers) as waiter``
    """One event parked on each of ``watchers`` for the block's duration, as a Waiter.  A class,
    not a generator: it is entered on every long-poll pass and acks=all produce."""

    __slots__ = ("_parked", "_event")

    def __init__(self, watchers: Iterable[Watchers]) -> None:
        self._parked = list(watchers)
        self._event = trio.Event()

    def __enter__(self) -> Waiter:
        event = self._event
        for w in self._parked:
            w.add(event)
        return Waiter(event)

    def __exit__(self, *exc: object) -> None:
        event = self._event
        for w in self._parked:
            w.discard(event)
