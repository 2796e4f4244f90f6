"""Replication quotas: how fast replicas being moved may copy, as Kafka's ReplicationQuotaManager.

``kafka-reassign-partitions --throttle`` names the replicas to throttle in each topic's
``leader.replication.throttled.replicas`` and ``follower.replication.throttled.replicas``
(``partition:broker`` items, or ``*``) and sets the bytes per second on the brokers
(``leader.replication.throttled.rate``, ``follower.replication.throttled.rate``, dynamic broker
configs).  A side's quota covers the partitions whose list names this broker; like Kafka, only
replicas out of the ISR are held back, so a reassignment never slows the replicas already in sync.

The rate is measured as Kafka's is: the bytes of the last ``replication.quota.window.num``
windows of ``replication.quota.window.size.seconds`` over the time they span, never less than all
but one window, so a quota allows a burst at first and then holds the average.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from pykafkad.config import LONG_MAX, BrokerConfig
from pykafkad.metadata.model import TopicInfo

# Waits for the quota are cut to this, so a rate raised meanwhile is seen soon.
MAX_DELAY_S = 1.0


class ReplicationQuota:
    """One side's quota (``leader`` or ``follower``) on this broker."""

    def __init__(self, side: str, config: BrokerConfig, topic: Callable[[str], TopicInfo | None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate_key = f"{side}.replication.throttled.rate"
        self.replicas_key = f"{side}.replication.throttled.replicas"
        self.config = config
        self._topic = topic
        self._clock = clock
        # (window start, bytes) of the windows still counted, oldest first.
        self._windows: deque[list[float]] = deque()

    @property
    def rate(self) -> int:
        return self.config[self.rate_key]

    def is_throttled(self, topic: str, index: int) -> bool:
        """Whether the topic's throttled replica list names this broker's replica of ``index``."""
        info = self._topic(topic)
        listed = (info.configs.get(self.replicas_key, "") if info is not None else "").strip()
        if not listed:
            return False
        items = {item.strip() for item in listed.split(",")}
        return "*" in items or f"{index}:{self.config.node_id}" in items

    def _window_s(self) -> float:
        return float(self.config["replication.quota.window.size.seconds"])

    def _trim(self, now: float) -> None:
        keep_s = self._window_s() * self.config["replication.quota.window.num"]
        while self._windows and self._windows[0][0] <= now - keep_s:
            self._windows.popleft()

    def record(self, nbytes: int) -> None:
        now = self._clock()
        self._trim(now)
        if not self._windows or now - self._windows[-1][0] >= self._window_s():
            self._windows.append([now, 0.0])
        self._windows[-1][1] += nbytes

    def _measured(self, now: float) -> tuple[float, float]:
        """(bytes counted, seconds they are spread over)."""
        self._trim(now)
        total = sum(w[1] for w in self._windows)
        window_s = self._window_s()
        least_s = window_s * (self.config["replication.quota.window.num"] - 1)
        spanned = now - self._windows[0][0] if self._windows else 0.0
        return total, max(spanned, least_s, window_s)

    def is_exceeded(self) -> bool:
        rate = self.rate
        if rate >= LONG_MAX:
            return False
        total, seconds = self._measured(self._clock())
        return total / seconds > rate

    def delay_s(self) -> float:
        """How long until the measured rate is back under the quota (at most MAX_DELAY_S)."""
        rate = self.rate
        if rate >= LONG_MAX:
            return 0.0
        total, seconds = self._measured(self._clock())
        if rate <= 0:
            return MAX_DELAY_S
        return min(MAX_DELAY_S, max(0.01, total / rate - seconds))
