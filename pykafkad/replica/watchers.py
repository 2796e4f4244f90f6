"""Delayed operations' wake-ups: a fetch long-polling several partitions, or a produce waiting for its
high watermark, parks one event on each partition it waits for; that partition's changes set it
(Kafka's purgatory keyed by partition, without timers: Trio's cancel scopes give the timeouts).
A follower's fetch waits for records, so an append wakes it; consumers' fetches, acks=all produces
and DeleteRecords wait for watermarks, so a high-watermark move wakes them.  Anything else (a
leader change, a log start offset, a partition removed) wakes everyone.  On a leader with
followers an append does not move the high watermark: each acks=all record then wakes each waiter
once, not twice, on the path from the append to the consumer's answer.

Park *before* looking: whatever happens between the look and the wait (an append finishing on a
worker thread) then still wakes the waiter.
"""

from __future__ import annotations

from collections.abc import Iterable

import trio


class Watchers:
    """The events parked on one partition (or on the broker, for shutdown), followers' fetches apart
    from the rest."""

    __slots__ = ("_events", "_replica_events", "generation")

    def __init__(self) -> None:
        self._events: set[trio.Event] = set()
        self._replica_events: set[trio.Event] = set()
        # Counts the wake-ups: a long poll woken again looks again only where this moved.
        self.generation = 0

    def wake_all(self) -> None:
        self.wake_for_high_watermark()
        self.wake_replicas()

    def wake_replicas(self) -> None:
        """An append that did not move the high watermark: wakes followers' fetches only."""
        self.generation += 1
        events, self._replica_events = self._replica_events, set()
        for event in events:
            event.set()

    def wake_for_high_watermark(self) -> None:
        """A high-watermark move: wakes all but followers' fetches."""
        self.generation += 1
        events, self._events = self._events, set()
        for event in events:
            event.set()

    def waiting(self) -> bool:
        """Whether anyone is parked here."""
        return bool(self._events) or bool(self._replica_events)

    def add(self, event: trio.Event, replica: bool = False) -> None:
        (self._replica_events if replica else self._events).add(event)

    def discard(self, event: trio.Event) -> None:
        self._events.discard(event)
        self._replica_events.discard(event)


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

    __slots__ = ("_parked", "_event", "_replica")

    def __init__(self, watchers: Iterable[Watchers], replica: bool = False) -> None:
        self._parked = list(watchers)
        self._event = trio.Event()
        # A follower's fetch: not woken by a high-watermark move alone (Watchers says why).
        self._replica = replica

    def __enter__(self) -> Waiter:
        event = self._event
        replica = self._replica
        for w in self._parked:
            w.add(event, replica)
        return Waiter(event)

    def __exit__(self, *exc: object) -> None:
        event = self._event
        for w in self._parked:
            w.discard(event)
