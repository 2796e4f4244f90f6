"""Profile pykafkad under one workload with py-spy.

    python -m benchmarks.profile [--only TEXT] [--profile quick|full] [--rate HZ]

Starts pykafkad, attaches `py-spy record` (native frames included, idle frames excluded) and
runs the first matching workload once.  Writes .cache/bench/profile/<workload>.collapsed (flame
graph input) and .svg, and prints the functions with the most samples, by self time and by
inclusive time.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import kafka_dist
from benchmarks.__main__ import PROFILES
from benchmarks.brokers import Pykafkad, install_cleanup

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / ".cache" / "bench" / "profile"


def top(collapsed: Path, n: int = 25) -> str:
    self_time: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        c = int(count)
        total += c
        frames = stack.split(";")
        self_time[frames[-1]] += c
        for f in set(frames):
            inclusive[f] += c
    lines = [f"{total} samples", "", "self:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in self_time.most_common(n)]
    lines += ["", "inclusive:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in inclusive.most_common(n)]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    parser.add_argument("--only", default="")
    parser.add_argument("--rate", type=int, default=200)
    args = parser.parse_args(argv)
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    workload = next(w for w in PROFILES[args.profile]["workloads"] if args.only in w.key)
    install_cleanup()
    lib = kafka_dist.ensure_jars()
    OUT.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", workload.key).strip("-")
    broker = Pykafkad(REPO_ROOT / ".cache" / "bench" / "run")
    broker.start()
    collapsed = OUT / f"{slug}.collapsed"
    spy = subprocess.Popen([py_spy, "record", "--pid", str(broker.pid), "--rate", str(args.rate), "--native",
                            "--format", "raw", "--output", str(collapsed)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)
    try:
        print(workload.key, workload.run(broker, lib))
    finally:
        spy.send_signal(signal.SIGINT)
        try:
            spy.wait(timeout=60)
        except subprocess.TimeoutExpired:
            spy.kill()
        broker.stop()
    if collapsed.exists():
        print(top(collapsed))
        print(f"\n{collapsed}")
    else:
        print("py-spy wrote nothing:", spy.stderr.read().decode() if spy.stderr else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
