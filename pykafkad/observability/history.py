"""A short memory of how the broker's numbers moved, for the console's charts: every
``INTERVAL_S`` the records in per topic (from the log end offsets of partitions led here) and the
lag of each group coordinated here (a share group's: its share-partitions'), ``SAMPLES`` samples
back (ten minutes)."""

from __future__ import annotations

import collections
import logging
import time
from typing import TYPE_CHECKING

import trio

from pykafkad.coordinator.group.requests import FetchOffsets

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

INTERVAL_S = 5.0
SAMPLES = 120


class History:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        # topic -> (time, records per second since the previous sample)
        self.topic_rates: dict[str, collections.deque[tuple[float, float]]] = {}
        # group -> (time, total lag)
        self.group_lag: dict[str, collections.deque[tuple[float, int]]] = {}
        self._last_ends: dict[str, tuple[float, int]] = {}

    async def run(self) -> None:
        while True:
            try:
                await self.sample()
            except Exception:  # noqa: BLE001 - a failed sample must not take the broker down
                log.exception("sampling the console's history failed")
            await trio.sleep(INTERVAL_S)

    async def sample(self) -> None:
        now = time.time()
        ends: dict[str, int] = {}
        for p in self.broker.replicas.partitions():
            if p.is_leader:
                ends[p.topic] = ends.get(p.topic, 0) + p.log_end_offset
        for topic, end in ends.items():
            previous = self._last_ends.get(topic)
            if previous is not None and now > previous[0]:
                rate = max(0.0, (end - previous[1]) / (now - previous[0]))
                self.topic_rates.setdefault(topic, collections.deque(maxlen=SAMPLES)).append((now, rate))
            self._last_ends[topic] = (now, end)
        for group_id in self.broker.groups.group_ids():
            fetched = await self.broker.groups.call(group_id, FetchOffsets())
            # A share group has no committed offsets: its lag is its share-partitions'.
            total = sum(max(0, o.lag) for _, _, o in await self.broker.share_group_offsets.of_group(group_id))
            for t in fetched.get("topics", []):
                for p in t["partitions"]:
                    replica = self.broker.replicas.get(t["name"], p["partition_index"])
                    if replica is not None and p["committed_offset"] >= 0:
                        total += max(0, replica.high_watermark - p["committed_offset"])
            self.group_lag.setdefault(group_id, collections.deque(maxlen=SAMPLES)).append((now, total))
        # Topics and groups that are gone take their history with them.
        for gone in set(self.topic_rates) - set(ends):
            self.topic_rates.pop(gone, None)
        for gone in set(self._last_ends) - set(ends):
            self._last_ends.pop(gone, None)
        for gone in set(self.group_lag) - set(self.broker.groups.group_ids()):
            self.group_lag.pop(gone, None)
