"""The machine-speed samples a run records, and the line the reports print from them."""

from __future__ import annotations

from benchmarks import machine_speed


def test_a_sample_times_both_jobs() -> None:
    sample = machine_speed.sample()
    assert sample["python_ms"] > 0 and sample["sha256_ms"] > 0 and sample["t"] > 0


def test_the_report_line_gives_each_jobs_median_and_range() -> None:
    samples = [{"t": 0, "python_ms": p, "sha256_ms": s} for p, s in ((150, 60), (170, 70), (400, 65))]
    line = machine_speed.describe(samples)
    assert "(3 samples)" in line
    assert "170 ms (range 150-400)" in line and "65 ms (range 60-70)" in line
    assert machine_speed.describe([]) == "- Machine speed: not sampled"
