"""How long a request's handler ran, as Kafka counts a request handler thread's time for
``request_percentage``: the time the connection's task spent running while it handled the request,
not the time it waited (a long-polling Fetch, an acks=all Produce waiting for its replicas).

Trio runs every connection in one thread, so the time is counted per task with an instrument
around each of the task's steps.  The instrument is installed only while a request_percentage
quota is set: every task step of the broker pays for it.
"""

from __future__ import annotations

import time

import trio


class TaskTimer(trio.abc.Instrument):
    """Running time of the tasks being timed (``start`` .. ``stop``), in seconds."""

    def __init__(self) -> None:
        self._spent: dict[trio.lowlevel.Task, float] = {}
        self._running: dict[trio.lowlevel.Task, float] = {}
        self.installed = False

    def set_installed(self, wanted: bool) -> None:
        if wanted == self.installed:
            return
        try:
            if wanted:
                trio.lowlevel.add_instrument(self)
            else:
                trio.lowlevel.remove_instrument(self)
        except (RuntimeError, KeyError):
            return  # outside a Trio run (tests of the lookup alone): nothing to time
        self.installed = wanted

    def start(self) -> trio.lowlevel.Task:
        """Start timing the calling task, from now (its current step included)."""
        task = trio.lowlevel.current_task()
        self._spent[task] = 0.0
        self._running[task] = time.perf_counter()
        return task

    def stop(self, task: trio.lowlevel.Task) -> float:
        """Seconds ``task`` ran since ``start``; called from the task itself, so its step counts to now."""
        spent = self._spent.pop(task, 0.0)
        began = self._running.pop(task, None)
        if began is not None:
            spent += time.perf_counter() - began
        return spent

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task in self._spent:
            self._running[task] = time.perf_counter()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        began = self._running.pop(task, None)
        if began is not None and task in self._spent:
            self._spent[task] += time.perf_counter() - began
