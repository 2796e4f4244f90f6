"""The ordered queue between a metadata store's watch callbacks and the cache they keep current.

A watch fires from wherever the store delivers it and only posts an event; one task applies the
events in the order they were posted; anyone waiting on the cache (a writer waiting to see its
own write, start-up waiting for the first load) wakes after each applied event.  ClusterMetadata
and the AclStore each keep one."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable

import trio


class WatchEvents:
    def __init__(self, apply: Callable[[tuple], Awaitable[None]], what: str, log: logging.Logger) -> None:
        self._apply = apply
        self._what = what
        self._log = log
        self._send, self._receive = trio.open_memory_channel[tuple](math.inf)
        self._pending = 0
        self._changed = trio.Event()

    def post(self, *event: object) -> None:
        """Queue ``event`` for ``apply``; safe from a watch callback."""
        self._pending += 1
        try:
            self._send.send_nowait(event)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            # A watch firing while the broker stops, after the cache stopped applying changes.
            self._pending -= 1

    async def run(self) -> None:
        """Apply events in order until ``close``; one that fails is logged and the next one applied."""
        async with self._receive:
            async for event in self._receive:
                try:
                    await self._apply(event)
                except Exception:  # noqa: BLE001 - one bad node must not stop the cache
                    self._log.exception("applying %s %s failed", self._what, event[:3])
                finally:
                    self._pending -= 1
                    self._changed.set()
                    self._changed = trio.Event()

    def wake(self) -> None:
        """Make every waiter check its condition again: for a condition that also reads state kept
        outside the cache (the controller's own epoch), when that state changes."""
        self._changed.set()
        self._changed = trio.Event()

    async def settled(self) -> None:
        """Until every event posted so far has been applied."""
        await self.wait_for(lambda: self._pending == 0)

    async def wait_for(self, predicate: Callable[[], object]) -> None:
        """Until ``predicate()`` holds (checked after each applied event)."""
        while not predicate():
            await self._changed.wait()

    def close(self) -> None:
        self._send.close()
