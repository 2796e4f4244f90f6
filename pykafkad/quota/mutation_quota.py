"""``controller_mutation_rate`` (KIP-599): how many partitions a client may create or delete per
second, with CreateTopics, CreatePartitions and DeleteTopics.

As in Kafka, a token bucket per quota entity: tokens come back at the quota's rate up to a burst
of rate x ``controller.quota.window.num`` x ``controller.quota.window.size.seconds``, and each
topic's partitions spend them.  From CreateTopics v6, CreatePartitions v3 and DeleteTopics v5 the
quota is *strict*: a topic asked for while the bucket is below zero is refused with
THROTTLING_QUOTA_EXCEEDED, and the response says how long until it is back at zero; a topic asked
for before that goes through even if it takes the bucket below zero.  Older clients cannot handle
that error, so for them it is *permissive*: every topic goes through and the response is throttled
once the bucket is below zero.
"""

from __future__ import annotations

import time

# The first version of each API whose clients understand THROTTLING_QUOTA_EXCEEDED.
STRICT_FROM = {19: 6, 37: 3, 20: 5}
THROTTLED_MESSAGE = "The throttling quota has been exceeded."


def _now_ms() -> float:
    return time.monotonic() * 1000


class TokenBucket:
    """Partitions a quota entity may still mutate; starts full."""

    def __init__(self, rate: float, burst_seconds: float, now_ms: float | None = None) -> None:
        self.rate = rate
        self.burst_seconds = burst_seconds
        self.tokens = rate * burst_seconds
        self._at_ms = _now_ms() if now_ms is None else now_ms

    def set_rate(self, rate: float) -> None:
        """A changed quota: the tokens already there are kept, within the new burst."""
        self.rate = rate
        self.tokens = min(self.tokens, rate * self.burst_seconds)

    def refill(self, now_ms: float) -> float:
        """The tokens at ``now_ms``."""
        elapsed_s = max(0.0, now_ms - self._at_ms) / 1000
        self.tokens = min(self.tokens + elapsed_s * self.rate, self.rate * self.burst_seconds)
        self._at_ms = now_ms
        return self.tokens

    def spend(self, permits: float, now_ms: float) -> None:
        self.refill(now_ms)
        self.tokens -= permits

    def throttle_ms(self, now_ms: float) -> int:
        """How long until the bucket is back at zero (0 when it is not below)."""
        tokens = self.refill(now_ms)
        return 0 if tokens >= 0 else round(-tokens / self.rate * 1000)


class MutationQuota:
    """One request's view of its client's bucket (none: unbounded)."""

    def __init__(self, bucket: TokenBucket | None, strict: bool) -> None:
        self.bucket = bucket
        self.strict = strict
        self._throttle_ms = 0
        self._throttled_at_ms = 0.0

    def refuses(self) -> bool:
        """Strict only: whether the next topic must be refused (the bucket is already below zero)."""
        if self.bucket is None or not self.strict:
            return False
        now = _now_ms()
        throttle = self.bucket.throttle_ms(now)
        if throttle:
            self._throttle_ms, self._throttled_at_ms = throttle, now
        return throttle > 0

    def record(self, partitions: int) -> None:
        """A topic's ``partitions`` were created or deleted."""
        if self.bucket is None or partitions <= 0:
            return
        now = _now_ms()
        self.bucket.spend(partitions, now)
        if not self.strict:
            throttle = self.bucket.throttle_ms(now)
            if throttle:
                self._throttle_ms, self._throttled_at_ms = throttle, now

    def throttle_ms(self) -> int:
        """The response's throttle time: what is left of the last one noted, as Kafka deducts the time
        the request took since."""
        if not self._throttle_ms:
            return 0
        return max(0, round(self._throttle_ms - (_now_ms() - self._throttled_at_ms)))


UNBOUNDED = MutationQuota(None, strict=False)
