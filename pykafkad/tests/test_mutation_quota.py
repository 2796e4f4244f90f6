"""controller_mutation_rate's token bucket, on KIP-599's own example: a quota of 10 partitions/s over
10 one-second windows holds 100; 90 and 90 more are accepted (the second takes it to -80), and
the next is refused for the 8 s the bucket needs to get back to zero."""

from __future__ import annotations

import pytest

from pykafkad.quota import mutation_quota
from pykafkad.quota.mutation_quota import MutationQuota, TokenBucket


def test_strict_accepts_until_exhausted_then_refuses_for_the_refill_time(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(mutation_quota, "_now_ms", lambda: now[0])
    bucket = TokenBucket(rate=10, burst_seconds=10, now_ms=now[0])
    quota = MutationQuota(bucket, strict=True)
    assert not quota.refuses()
    quota.record(90)
    assert not quota.refuses() and quota.throttle_ms() == 0
    quota.record(90)
    assert bucket.tokens == -80
    assert quota.refuses() and quota.throttle_ms() == 8000
    now[0] += 3000  # the response's throttle is what is left of it
    assert quota.throttle_ms() == 5000
    now[0] += 5000
    assert not quota.refuses()
    # Refill stops at the burst.
    now[0] += 60_000
    assert bucket.refill(now[0]) == 100


def test_permissive_accepts_everything_and_throttles_once_below_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(mutation_quota, "_now_ms", lambda: now[0])
    quota = MutationQuota(TokenBucket(rate=10, burst_seconds=10, now_ms=0.0), strict=False)
    quota.record(90)
    assert quota.throttle_ms() == 0 and not quota.refuses()
    quota.record(90)
    assert not quota.refuses() and quota.throttle_ms() == 8000


def test_a_lowered_quota_keeps_the_tokens_within_its_burst() -> None:
    bucket = TokenBucket(rate=10, burst_seconds=10, now_ms=0.0)
    bucket.set_rate(1)
    assert bucket.refill(0.0) == 10
