"""Periodic log work: retention, compaction (the cleaner), segment rolling by age, timed flushes, the
recovery-point checkpoints (``log.flush.offset.checkpoint.interval.ms``), and forgetting idle producers
(``producer.id.expiration.ms``).

Python only decides when; the work itself is in the Rust log, run on worker threads with the
GIL released so produce and fetch keep flowing while a partition is cleaned.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from pykafkad._rust_log import LogError, PartitionLog
from pykafkad.clock import now_ms
from pykafkad.config import LONG_MAX, BrokerConfig

if TYPE_CHECKING:
    from pykafkad.log.manager import LogManager

log = logging.getLogger(__name__)

FLUSH_CHECK_MS = 1000
# Kafka's log.initial.task.delay.ms (internal): its periodic log tasks first run this long after start.
INITIAL_TASK_DELAY_MS = 30000


def _compacted(settings: dict[str, object]) -> bool:
    return "compact" in str(settings["cleanup_policy"])


def _timed_flush(settings: dict[str, object]) -> bool:
    flush_ms = settings["flush_ms"]
    return isinstance(flush_ms, int) and flush_ms < LONG_MAX


class LogHousekeeper:
    """Runs each kind of periodic log work on its own interval, over every partition."""

    def __init__(self, config: BrokerConfig, logs: LogManager) -> None:
        self.config = config
        self.logs = logs

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        config = self.config
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._every, "log.retention.check.interval.ms", self.retention_pass)
            if config["log.cleaner.enable"]:
                nursery.start_soon(self._every, "log.cleaner.backoff.ms", self.cleaner_pass)
            nursery.start_soon(self._flush_loop)
            nursery.start_soon(self._every, "log.flush.offset.checkpoint.interval.ms", self.recovery_point_pass,
                               INITIAL_TASK_DELAY_MS)
            nursery.start_soon(self._every, "producer.id.expiration.check.interval.ms", self.producer_expiry_pass)
            task_status.started()

    async def _every(self, interval_key: str, work: Callable[[], Awaitable[None]],
                     first_delay_ms: int | None = None) -> None:
        """Run ``work`` every ``interval_key`` ms; the first time after ``first_delay_ms`` if that is sooner."""
        delay = self.config[interval_key]
        if first_delay_ms is not None:
            delay = min(delay, first_delay_ms)
        while True:
            await trio.sleep(max(delay, 10) / 1000)
            await work()
            delay = self.config[interval_key]

    def _logs(self, wanted: Callable[[dict[str, object]], bool]) -> list[tuple[tuple[str, int], PartitionLog]]:
        """The open logs whose topic settings call for the work."""
        settings = self.logs.topic_settings
        return [(key, plog) for key, plog in list(self.logs.logs.items())
                if key[0] in settings and wanted(settings[key[0]])]

    async def _each(self, what: str, call: Callable[[PartitionLog], object],
                    wanted: Callable[[dict[str, object]], bool] = lambda _: True,
                    ) -> list[tuple[tuple[str, int], object]]:
        """Run ``call`` on a worker thread for every open log ``wanted`` picks; a closed or failing log is
        skipped and logged."""
        done = []
        for key, plog in self._logs(wanted):
            try:
                result = await trio.to_thread.run_sync(call, plog)
            except LogError as e:
                if not plog.closed:
                    log.error("%s of %s-%d failed: %s", what, *key, e)
                continue
            done.append((key, result))
        return done

    async def retention_pass(self) -> None:
        """Roll aged active segments and delete segments past retention.ms / retention.bytes."""
        now = now_ms()
        for (topic, partition), result in await self._each("retention", lambda p: p.enforce_retention(now)):
            deleted, freed = result  # type: ignore[misc]
            if deleted:
                log.info("retention deleted %d segment(s), %d bytes, of %s-%d", deleted, freed, topic, partition)

    async def cleaner_pass(self) -> None:
        """Compact the partitions whose cleanup.policy includes compact and that are dirty enough. The
        key -> offset map of a pass fits log.cleaner.dedupe.buffer.size x log.cleaner.io.buffer.load.factor;
        a partition with more dirty keys than that is cleaned over several passes, as in Kafka."""
        now = now_ms()
        budget = int(self.config["log.cleaner.dedupe.buffer.size"] * self.config["log.cleaner.io.buffer.load.factor"])
        for (topic, partition), stats in await self._each("cleaning", lambda p: p.clean(now, budget), _compacted):
            if stats:
                log.info("cleaned %s-%d: %s", topic, partition, stats)

    async def producer_expiry_pass(self) -> None:
        """Forget the idempotent producers idle for producer.id.expiration.ms (never one with an open
        transaction), as Kafka does: otherwise every short-lived producer stays in memory and in each
        snapshot for good. A forgotten producer that comes back is taken as a new one."""
        now, expiration = now_ms(), self.config["producer.id.expiration.ms"]
        for (topic, partition), removed in await self._each(
                "producer expiry", lambda p: p.remove_expired_producers(now, expiration)):
            if removed:
                log.info("expired %d producer(s) idle for %d ms of %s-%d", removed, expiration, topic, partition)

    async def recovery_point_pass(self) -> None:
        """fsync the segments rolled since the last flush and checkpoint every log's recovery point, so a
        crash re-reads only what came after it (Kafka's log.flush.offset.checkpoint.interval.ms)."""
        flushed = await trio.to_thread.run_sync(self.logs.checkpoint_recovery_points)
        if flushed:
            log.debug("flushed the rolled segments of %d log(s) for their recovery points", flushed)

    async def _flush_loop(self) -> None:
        """flush.ms / log.flush.interval.ms: fsync partitions whose unflushed data is old enough."""
        while True:
            interval = self.config["log.flush.scheduler.interval.ms"]
            await trio.sleep((FLUSH_CHECK_MS if interval >= LONG_MAX else interval) / 1000)
            now = now_ms()
            await self._each("flush", lambda p, now=now: p.flush_if_due(now), _timed_flush)
