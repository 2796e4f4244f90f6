"""The ordered queue between a metadata store's watch callbacks and the cache they keep current.

A watch fires from wherever the store delivers it and only posts an event; one task applies the
events in the order they were posted; anyone waiting on the cache (a writer waiting to see its
own write, start-up waiting for the first load) has its condition checked after each applied
event, and wakes once it holds.  ClusterMetadata and the AclStore each keep one."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable

import trio

# Events applied before the loop yields to other tasks: bounds how long a burst holds the loop.
_MAX_BATCH = 1024


class _Waiter:
    __slots__ = ("predicate", "done", "held")

    def __init__(self, predicate: Callable[[], object]) -> None:
        self.predicate = predicate
        self.done = trio.Event()
        self.held = False


class WatchEvents:
    def __init__(self, apply: Callable[[tuple], Awaitable[None]], what: str, log: logging.Logger) -> None:
        self._apply = apply
        self._what = what
        self._log = log
        self._send, self._receive = trio.open_memory_channel[tuple](math.inf)
        self._pending = 0
        self._waiters: list[_Waiter] = []

    def post(self, *event: object) -> None:
        """Queue ``event`` for ``apply``; safe from a watch callback."""
        self._pending += 1
        try:
            self._send.send_nowait(event)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            # A watch firing while the broker stops, after the cache stopped applying changes.
            self._pending -= 1

    async def run(self) -> None:
        """Apply events in order until ``close``; one that fails is logged and the next one applied.

        The events already queued are applied without a trip through the scheduler for each, and
        the waiters' conditions are checked here after each one: a topic of thousands of
        partitions posts an event per partition, and a receive and a wake-up of every waiter per
        event cost as much as applying them."""
        async with self._receive:
            async for event in self._receive:
                batch = [event]
                while len(batch) < _MAX_BATCH:
                    try:
                        batch.append(self._receive.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                for queued in batch:
                    try:
                        await self._apply(queued)
                    except Exception:  # noqa: BLE001 - one bad node must not stop the cache
                        self._log.exception("applying %s %s failed", self._what, queued[:3])
                    finally:
                        self._pending -= 1
                        self._check_waiters()

    @property
    def pending(self) -> int:
        """Events posted and not yet applied."""
        return self._pending

    def wake(self) -> None:
        """Check every waiter's condition again: for a condition that also reads state kept outside
        the cache (the controller's own epoch), when that state changes."""
        self._check_waiters()

    async def settled(self) -> None:
        """Until every event posted so far has been applied."""
        await self.wait_for(lambda: self._pending == 0)

    async def wait_for(self, predicate: Callable[[], object]) -> None:
        """Until ``predicate()`` holds: now, or after some applied event (or ``wake``)."""
        while not predicate():
            waiter = _Waiter(predicate)
            self._waiters.append(waiter)
            try:
                await waiter.done.wait()
            finally:
                if not waiter.done.is_set():
                    self._waiters.remove(waiter)
            if waiter.held:
                # It held right after that event; a later one may already have changed the cache
                # again, and the waiter must not miss the moment it waited for.
                return

    def _check_waiters(self) -> None:
        if not self._waiters:
            return
        waiting = self._waiters
        self._waiters = []
        for waiter in waiting:
            try:
                waiter.held = bool(waiter.predicate())
            except Exception:  # noqa: BLE001 - raised again in the waiter's own task, which checks it
                waiter.done.set()
                continue
            if waiter.held:
                waiter.done.set()
            else:
                self._waiters.append(waiter)

    def close(self) -> None:
        self._send.close()
