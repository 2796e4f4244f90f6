"""How fast the machine is while a benchmark runs: two fixed single-threaded jobs and one loopback hop
between two processes, timed before each broker's run and reported with the results.

A shared host can give the same cores much less on one day than on another, and the load average
does not show it: on 2026-11-29 both brokers needed 1.5-2.2x the CPU per record of the day before,
at the same load.  Comparing these figures between two runs says whether their absolute numbers can
be compared; the ratios between the brokers of one run are what the targets use either way.

The hop is what a latency workload at a low rate pays at every process boundary on a record's path:
a 64-byte message over loopback TCP to another process, timed from just before ``send`` to its
receipt, once back to back and once after 10 ms of quiet (100 records/s leaves 10 ms between
records).  On the shared VM of 2026-11-29 the quiet hop took 8-12 times the back-to-back one (about
170 us against 17), and most of it was the sender's own ``send`` call: a path that has not run for a
while runs cold.  Every broker pays it, at each hop of the record's path.

The host's steal time (``/proc/stat``: time a vCPU was runnable but the host ran something else) is
read with each sample; the report gives its share between the first and last sample.  On that VM a
latency probe's p99 of 20-40 ms came from stalls of every process at once (an idle 1 ms sleeper saw
them too) while the steal counter moved, not from a long step of a broker's event loop.
"""

from __future__ import annotations

import hashlib
import os
import socket
import statistics
import struct
import subprocess
import sys
import time
from typing import Any

_MIB = bytes(range(256)) * 4096
_SHA256_MIB = 64
_ROUNDS = 500_000
_HOPS = 60
_QUIET_S = 0.010
# The receiving process: reads each 64-byte message, notes how long after its send-time it arrived
# (CLOCK_MONOTONIC is one clock for every process on the machine), acknowledges it, and at the end
# prints the microseconds, one line per message.
_RECEIVER = """
import socket, struct, sys, time
conn = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
took = []
for _ in range(int(sys.argv[2])):
    data = b""
    while len(data) < 64:
        chunk = conn.recv(64 - len(data))
        if not chunk:
            sys.exit(1)
        data += chunk
    took.append((time.clock_gettime(time.CLOCK_MONOTONIC) - struct.unpack("d", data[:8])[0]) * 1e6)
    conn.sendall(b"k")
print("\\n".join(f"{t:.1f}" for t in took))
"""


def _interpreter_job() -> int:
    # Small dicts, ints and short strings, the stuff of a broker's request path in Python.
    total = 0
    for i in range(_ROUNDS):
        entry = {"partition": i & 15, "offset": i, "topic": "t" + str(i & 7)}
        total += entry["offset"] + entry["partition"] + len(entry["topic"])
    return total


def hop_us(quiet_s: float, hops: int = _HOPS) -> float:
    """The median microseconds of a 64-byte loopback TCP message to another process, sent ``quiet_s``
    after the receiver acknowledged the one before."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        receiver = subprocess.Popen([sys.executable, "-c", _RECEIVER, str(server.getsockname()[1]), str(hops)],
                                    stdout=subprocess.PIPE, text=True)
        try:
            server.settimeout(30)
            conn, _ = server.accept()
            with conn:
                conn.settimeout(30)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                padding = b"x" * 56
                for _ in range(hops):
                    if quiet_s:
                        time.sleep(quiet_s)
                    conn.sendall(struct.pack("d", time.clock_gettime(time.CLOCK_MONOTONIC)) + padding)
                    if not conn.recv(1):
                        raise OSError("the receiver closed the connection")
            out, _ = receiver.communicate(timeout=30)
        finally:
            if receiver.poll() is None:
                receiver.kill()
                receiver.wait()
    return statistics.median(float(line) for line in out.split())


def cpu_times() -> tuple[float, float] | None:
    """(steal, all) CPU seconds of every vCPU since boot, from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    hz = os.sysconf("SC_CLK_TCK")
    return ticks[7] / hz, sum(ticks) / hz


def sample() -> dict[str, float]:
    """Each job's time now: the interpreter's and sha256 over 64 MiB (C code) in milliseconds, and a
    loopback hop between processes in microseconds, back to back and after 10 ms of quiet."""
    started = time.perf_counter()
    _interpreter_job()
    python_done = time.perf_counter()
    digest = hashlib.sha256()
    for _ in range(_SHA256_MIB):
        digest.update(_MIB)
    hashed = time.perf_counter()
    found = {"t": time.time(), "python_ms": (python_done - started) * 1000, "sha256_ms": (hashed - python_done) * 1000,
             "hop_us": hop_us(0), "quiet_hop_us": hop_us(_QUIET_S)}
    if (times := cpu_times()) is not None:
        found["steal_s"], found["cpu_s"] = times
    return found


def describe(samples: list[dict[str, Any]]) -> str:
    """One line for a report: each job's median and range over the run's samples."""
    if not samples:
        return "- Machine speed: not sampled"
    parts = []
    for key, label, unit in (("python_ms", f"a fixed pure-Python job ({_ROUNDS:,} small dicts)", "ms"),
                             ("sha256_ms", f"sha256 of {_SHA256_MIB} MiB", "ms"),
                             ("hop_us", "a loopback hop to another process back to back", "us"),
                             ("quiet_hop_us", f"the same hop after {_QUIET_S * 1000:.0f} ms of quiet", "us")):
        values = [s[key] for s in samples if key in s]  # runs before the hop was sampled lack it
        if values:
            parts.append(f"{label} {statistics.median(values):.0f} {unit} "
                         f"(range {min(values):.0f}-{max(values):.0f})")
    timed = [s for s in samples if "steal_s" in s]
    if len(timed) >= 2 and timed[-1]["cpu_s"] > timed[0]["cpu_s"]:
        share = (timed[-1]["steal_s"] - timed[0]["steal_s"]) / (timed[-1]["cpu_s"] - timed[0]["cpu_s"])
        parts.append(f"the host's steal {share:.1%} of the vCPUs' time from the first sample to the last")
    return (f"- Machine speed, sampled before each run ({len(samples)} samples): " + "; ".join(parts)
            + ". Lower is faster; absolute figures compare between runs only when these do")
