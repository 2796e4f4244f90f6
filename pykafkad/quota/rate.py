"""Kafka's windowed rate (``SampledStat`` with ``Rate``), the measure every client quota is checked against.

The rate keeps ``quota.window.num`` samples of ``quota.window.size.seconds`` each; a sample older
than all of them together is forgotten.  The rate is what the samples hold divided by the time
they span, counted as at least ``quota.window.num - 1`` whole windows, so a new client is not
taken to be far over its quota by its first request (Kafka's ``Rate.windowSize``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class _Sample:
    start_ms: float
    value: float = 0.0


class Rate:
    """A per-second rate over ``samples`` windows of ``window_ms`` each."""

    def __init__(self, samples: int, window_ms: float) -> None:
        self.samples_wanted = samples
        self.window_ms = window_ms
        self._samples: list[_Sample] = []
        self._current = 0
        self.last_record_ms = 0.0

    def record(self, value: float, now_ms: float) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            sample = self._advance(now_ms)
        sample.value += value
        self.last_record_ms = now_ms

    def measure(self, now_ms: float) -> float:
        """Per second, over the window (``window_size_ms``)."""
        self._purge(now_ms)
        total = sum(s.value for s in self._samples)
        return total / (self.window_size_ms(now_ms) / 1000)

    def window_size_ms(self, now_ms: float) -> float:
        self._purge(now_ms)
        oldest = min((s.start_ms for s in self._samples), default=now_ms)
        elapsed = now_ms - oldest
        full_windows = int(elapsed // self.window_ms)
        minimum = self.samples_wanted - 1
        if full_windows < minimum:
            elapsed += (minimum - full_windows) * self.window_ms
        return max(elapsed, 1.0)

    def throttle_ms(self, bound: float, now_ms: float) -> int:
        """Kafka's ``QuotaUtils.throttleTime``: how long the client must wait for the rate to come back
        to ``bound``; 0 when it is not over."""
        value = self.measure(now_ms)
        if value <= bound:
            return 0
        return round((value - bound) / bound * self.window_size_ms(now_ms))

    def _current_sample(self, now_ms: float) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: float) -> _Sample:
        self._current = (self._current + 1) % self.samples_wanted
        if self._current >= len(self._samples):
            sample = _Sample(now_ms)
            self._samples.append(sample)
        else:
            sample = self._samples[self._current]
            sample.start_ms, sample.value = now_ms, 0.0
        return sample

    def _purge(self, now_ms: float) -> None:
        """Samples older than every window together are reset (Kafka's purgeObsoleteSamples)."""
        expire_ms = self.samples_wanted * self.window_ms
        for sample in self._samples:
            if now_ms - sample.start_ms >= expire_ms:
                sample.start_ms, sample.value = now_ms, 0.0
