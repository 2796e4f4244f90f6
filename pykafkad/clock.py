"""Wall-clock milliseconds, the unit of every Kafka timestamp."""

from __future__ import annotations

import time


def now_ms() -> int:
    return time.time_ns() // 1_000_000
