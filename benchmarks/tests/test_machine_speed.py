"""The machine-speed samples a run records, and the line the reports print from them."""

from __future__ import annotations

import time

from benchmarks import machine_speed


def test_a_sample_times_both_jobs_and_both_hops() -> None:
    sample = machine_speed.sample()
    assert sample["python_ms"] > 0 and sample["sha256_ms"] > 0 and sample["t"] > 0
    # A real message crossed to another process each time: it cannot arrive before it was sent.
    assert sample["hop_us"] > 0 and sample["quiet_hop_us"] > 0


def test_a_quiet_hop_waits_between_messages() -> None:
    started = time.perf_counter()
    assert machine_speed.hop_us(0.02, hops=5) > 0
    assert time.perf_counter() - started >= 5 * 0.02


def test_the_report_line_gives_each_figures_median_and_range() -> None:
    samples = [{"t": 0, "python_ms": p, "sha256_ms": s, "hop_us": h, "quiet_hop_us": q}
               for p, s, h, q in ((150, 60, 17, 160), (170, 70, 20, 180), (400, 65, 19, 400))]
    line = machine_speed.describe(samples)
    assert "(3 samples)" in line
    assert "170 ms (range 150-400)" in line and "65 ms (range 60-70)" in line
    assert "back to back 19 us (range 17-20)" in line and "quiet 180 us (range 160-400)" in line
    assert machine_speed.describe([]) == "- Machine speed: not sampled"


def test_samples_from_before_the_hop_was_measured_still_report() -> None:
    line = machine_speed.describe([{"t": 0, "python_ms": 150, "sha256_ms": 60}])
    assert "150 ms" in line and "hop" not in line


def test_the_hosts_steal_share_is_reported_between_the_first_and_last_sample() -> None:
    samples = [{"t": 0, "python_ms": 150, "sha256_ms": 60, "steal_s": 10.0, "cpu_s": 1000.0},
               {"t": 1, "python_ms": 150, "sha256_ms": 60, "steal_s": 10.5, "cpu_s": 1050.0},
               {"t": 2, "python_ms": 150, "sha256_ms": 60, "steal_s": 12.0, "cpu_s": 1100.0}]
    assert "steal 2.0% of the vCPUs' time" in machine_speed.describe(samples)
    assert "steal" not in machine_speed.describe(samples[:1])


def test_cpu_times_read_this_machines_counters() -> None:
    times = machine_speed.cpu_times()
    assert times is not None  # Linux, where the benchmarks run
    steal, total = times
    assert 0 <= steal <= total and total > 0
