"""``python -m cluster_tests.faults``: run a fault schedule, or write the report.

    python -m cluster_tests.faults run --broker pykafkad|kafka --seed N --duration SECONDS [--out FILE]
    python -m cluster_tests.faults report [--results DIR] [--doc docs/faults.md]

``run`` needs root (network namespaces, tmpfs mounts).  Its result goes to FILE (default
``.cache/faults/<broker>.json``); it exits 1 if the checker found an anomaly.  ``report`` renders every
result in DIR into the report page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from cluster_tests.faults import report
from cluster_tests.faults.network import available
from compat_tests.broker_process import REPO_ROOT

RESULTS = REPO_ROOT / ".cache" / "faults"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cluster_tests.faults", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run one schedule against a fresh cluster")
    r.add_argument("--broker", choices=("pykafkad", "kafka"), default="pykafkad")
    r.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    r.add_argument("--duration", type=float, default=1800.0, help="seconds of faults (default 1800)")
    r.add_argument("--out", type=Path)
    p = sub.add_parser("report", help="write the report page from the results")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--doc", type=Path, default=REPO_ROOT / "docs" / "faults.md")
    args = parser.parse_args(argv)
    if args.command == "report":
        report.write(args.results, args.doc)
        print(f"faults: wrote {args.doc}")
        return 0
    why = available()
    if why:
        print(f"faults: {why}", file=sys.stderr)
        return 2
    from cluster_tests.faults.run import run
    kafka_lib = None
    if args.broker == "kafka":
        from benchmarks import kafka_dist
        kafka_lib = kafka_dist.ensure_jars()
    out = args.out or RESULTS / f"{args.broker}.json"
    work = RESULTS / f"{args.broker}-work"
    if work.exists():
        import shutil
        shutil.rmtree(work)
    work.mkdir(parents=True)
    # librdkafka logs every reconnect on fd 2: to a file beside the history, the summary stays readable.
    saved = os.dup(2)
    with open(work / "harness.stderr.log", "ab") as err:
        os.dup2(err.fileno(), 2)
        try:
            result = run(args.broker, args.seed, args.duration, work, kafka_lib,
                         log=lambda s: print(s, flush=True))
        finally:
            os.dup2(saved, 2)
    result["command"] = f"python -m cluster_tests.faults run --broker {args.broker} --seed {args.seed} " \
                        f"--duration {args.duration:.0f}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    return 1 if result["anomalies"] else 0


if __name__ == "__main__":
    sys.exit(main())
