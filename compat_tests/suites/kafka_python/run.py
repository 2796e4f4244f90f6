"""Run kafka-python's own integration tests, unchanged, against pykafkad or Apache Kafka 4.4.0.

``python -m compat_tests.suites.kafka_python.run [--broker pykafkad|kafka] [-- PYTEST_ARGS...]``

1. Fetches the kafka-python sdist (the version compat_tests uses) into ``.cache/suites/`` with pip,
   extracts its ``test/integration`` and ``test/testutil.py``, and adds our stand-ins for the two
   files the sdist lacks (``test/__init__.py``, ``test/service.py``).  The SASL and SSL modules are
   left out: they start brokers of their own.
2. Starts the broker with BrokerProcess (``num.partitions=4``, as the suite's own fixtures configure
   Kafka; ``--config fixture`` adds the rest of what the suite's broker template sets, ``--override
   key=value`` anything else); ``--broker kafka`` starts the reference Kafka (needs the jars of
   ``make java-deps`` in env JAVA_LIB, by default ``.cache/java/lib``).
3. Runs pytest on the suite with ``KAFKA_URI``, ``KAFKA_VERSION`` and ``KAFKA_ROOT`` pointing at it,
   and keeps the output, a junit xml, the outcomes and the broker's stderr in
   ``.cache/suites/runs/<broker>-<time>/``.
4. Compares the outcomes with ``allowlist.txt``: a listed test that did not pass fails the run
   (exit 1); a passing test not on the list is printed so the list gets updated.  The list is about
   pykafkad; against Kafka the comparison is printed but does not decide the exit status.

Exit status: 0 the allow-list holds, 1 it does not, 2 the suite could not be run at all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from compat_tests.broker_process import REFERENCE_KAFKA_MODULE, REPO_ROOT, BrokerError, BrokerProcess

KAFKA_PYTHON_VERSION = "3.0.12"
# The release the suite's fixtures pin their clients' ``api_version`` to, and expect the broker to
# be inferred as: kafka-python 3.0.12 knows Kafka up to 4.3 and takes 4.4.0 as 4.3, which is also
# what it infers from pykafkad's APIs (test_kafka_version_infer).
KAFKA_VERSION = "4.4.0"
HERE = Path(__file__).resolve().parent
CACHE = REPO_ROOT / ".cache" / "suites"
ALLOWLIST = HERE / "allowlist.txt"
# --config plain (what issue 17 measured first): the partition count the suite's fixtures give
# their brokers, and no initial rebalance delay (reference_kafka.py always sets it, the suite's broker
# template too; pykafkad's default is Kafka's 3 s, which only slows every group join down).
# --config fixture (the default): also what the suite's own broker template sets and its tests rely on (node id 0,
# an allow-everyone ACL authorizer, session timeouts down to 1 s).
PLAIN = {"num.partitions": "4", "group.initial.rebalance.delay.ms": "0"}
CONFIGS = {
    "plain": PLAIN,
    "fixture": {
        **PLAIN,
        "node.id": "0",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "group.min.session.timeout.ms": "1000",
    },
}
# Modules left out: they need a SASL or SSL listener the suite's fixtures configure themselves.
LEFT_OUT = ("test_sasl_integration.py", "test_ssl_integration.py")
SUITE_TIMEOUT_S = 1800.0
# DEBUG: a failed test's report then carries kafka-python's own log of its metadata updates and
# fetches (a consumer without a group_id saw nothing for 9 s, once in a loaded CI run, with nothing
# in the broker's log to say why).
PYTEST_REPORT = ["-v", "-rfEs", "-p", "no:cacheprovider", "--log-level=DEBUG"]
PYTEST_INI = """\
# Written by compat_tests/suites/kafka_python/run.py: the suite's own pytest settings (pyproject.toml,
# not extracted) ask for pytest-timeout and DEBUG logging; the runner's plugin sets the deadline.
[pytest]
addopts =
"""


class SuiteError(Exception):
    """The suite could not be fetched, prepared or run."""


@dataclass
class Comparison:
    """What the outcomes say about the allow-list."""

    listed_not_passing: dict[str, str] = field(default_factory=dict)  # node id -> outcome ("missing")
    passing_unlisted: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.listed_not_passing


def fetch_sdist(cache: Path = CACHE, version: str = KAFKA_PYTHON_VERSION) -> Path:
    """The kafka-python sdist in ``cache``, downloaded with pip if it is not there yet."""
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / f"kafka_python-{version}.tar.gz"
    if sdist.exists():
        return sdist
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
           f"kafka-python=={version}", "-d", str(cache)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not sdist.exists():
        raise SuiteError(f"pip download of kafka-python=={version} failed:\n{done.stdout}{done.stderr}")
    return sdist


def prepare_suite(sdist: Path, cache: Path = CACHE, version: str = KAFKA_PYTHON_VERSION) -> Path:
    """A fresh directory holding ``test/`` (integration tests, testutil, stand-ins) and a pytest.ini."""
    workdir = cache / f"kafka-python-{version}"
    shutil.rmtree(workdir, ignore_errors=True)
    prefix = f"kafka_python-{version}/"
    wanted = (prefix + "test/integration/", prefix + "test/testutil.py")
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.startswith(wanted)]
        if not any(m.name.endswith("/conftest.py") for m in members):
            raise SuiteError(f"{sdist} has no test/integration/conftest.py")
        for member in members:
            member.name = member.name[len(prefix):]
            if member.name.startswith("/") or ".." in Path(member.name).parts:
                raise SuiteError(f"{sdist} has a member outside its directory: {member.name}")
            # The "data" extraction filter came with Python 3.11.4; Debian 12's 3.11.2 has none.
            tar.extract(member, workdir, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    for name in LEFT_OUT:
        (workdir / "test" / "integration" / name).unlink(missing_ok=True)
    shutil.copyfile(HERE / "standin_package_init.py", workdir / "test" / "__init__.py")
    shutil.copyfile(HERE / "standin_service.py", workdir / "test" / "service.py")
    (workdir / "pytest.ini").write_text(PYTEST_INI)
    return workdir


def make_broker(kind: str, run_dir: Path, overrides: dict[str, str]) -> BrokerProcess:
    """A (not yet started) pykafkad or reference Kafka broker with its log dir under ``run_dir``."""
    if kind == "kafka":
        java_lib = Path(os.environ.setdefault("JAVA_LIB", str(REPO_ROOT / ".cache" / "java" / "lib")))
        # `make java-deps` stamps the directory with the release it holds (.done-<version>).
        if not any(java_lib.glob(".done-*")):
            raise SuiteError(f"no Kafka jars in {java_lib}: run `make java-deps` (or set JAVA_LIB)")
        module = REFERENCE_KAFKA_MODULE
    elif kind == "pykafkad":
        module = "pykafkad"
    else:
        raise SuiteError(f"--broker {kind!r}: expected pykafkad or kafka")
    return BrokerProcess(run_dir / "broker", overrides, name=f"{kind}-broker", module=module)


def run_pytest(workdir: Path, broker: BrokerProcess, run_dir: Path, extra: list[str]) -> dict[str, object]:
    """Run the suite against ``broker``; the plugin's outcomes document, output also in run_dir/pytest.log."""
    outcomes_path = run_dir / "outcomes.json"
    env = dict(os.environ)
    env.update({
        "KAFKA_URI": f"kafka://{broker.bootstrap}",
        "KAFKA_VERSION": KAFKA_VERSION,
        "KAFKA_ROOT": str(workdir),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p),
    })
    cmd = [sys.executable, "-m", "pytest", "test/integration", *PYTEST_REPORT,
           "-p", "compat_tests.suites.kafka_python.plugin", f"--suite-outcomes={outcomes_path}",
           f"--junitxml={run_dir / 'junit.xml'}", *extra]
    with open(run_dir / "pytest.log", "w") as log:
        log.write(" ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        assert proc.stdout is not None
        deadline = time.monotonic() + SUITE_TIMEOUT_S
        for line in proc.stdout:
            sys.stdout.write(line)
            log.write(line)
            if time.monotonic() > deadline:
                proc.kill()
                break
        code = proc.wait()
    if not outcomes_path.exists():
        raise SuiteError(f"pytest exited with {code} and recorded no outcomes; see {run_dir / 'pytest.log'}")
    return json.loads(outcomes_path.read_text())


def load_allowlist(path: Path = ALLOWLIST) -> list[str]:
    """Node ids, one a line; blank lines and ``#`` comments ignored."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def compare(outcomes: dict[str, str], allowed: list[str], subset: bool = False) -> Comparison:
    """``subset``: only some tests were selected (-k ...), so a listed test that did not run is no failure."""
    result = Comparison()
    for node in allowed:
        outcome = outcomes.get(node, "missing")
        if outcome != "passed" and not (subset and outcome == "missing"):
            result.listed_not_passing[node] = outcome
    listed = set(allowed)
    result.passing_unlisted = sorted(n for n, o in outcomes.items() if o == "passed" and n not in listed)
    return result


def summary(outcomes: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    parts = [f"{counts[k]} {k}" for k in ("passed", "failed", "error", "skipped") if k in counts]
    return f"{', '.join(parts) or 'nothing ran'} ({len(outcomes)} tests)"


def report(kind: str, document: dict[str, object], comparison: Comparison, run_dir: Path, subset: bool) -> None:
    outcomes: dict[str, str] = document["outcomes"]  # type: ignore[assignment]
    messages: dict[str, str] = document["messages"]  # type: ignore[assignment]
    print(f"\nkafka-python {KAFKA_PYTHON_VERSION} integration suite on {kind}: {summary(outcomes)}")
    for node, outcome in sorted(outcomes.items()):
        if outcome in ("failed", "error"):
            first_line = (messages.get(node, "").splitlines() or [""])[0]
            print(f"  {outcome.upper():6} {node}\n         {first_line[:300]}")
    if comparison.listed_not_passing:
        print(f"allow-list: {len(comparison.listed_not_passing)} listed test(s) did not pass:")
        for node, outcome in comparison.listed_not_passing.items():
            print(f"  {outcome:8} {node}")
    else:
        print(f"allow-list: every listed test{' that ran' if subset else ''} passed")
    if comparison.passing_unlisted:
        print(f"passing but not on the allow-list ({ALLOWLIST.relative_to(REPO_ROOT)}): add them unless flaky")
        for node in comparison.passing_unlisted:
            print(f"  {node}")
    print(f"output, junit.xml, outcomes.json and the broker's stderr: {run_dir}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", choices=("pykafkad", "kafka"), default="pykafkad")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="fixture",
                        help="broker settings: plain (num.partitions=4) or fixture (as the suite's own broker)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="one more broker setting (repeatable)")
    parser.add_argument("pytest_args", nargs="*", help="after --: extra pytest arguments (-k, --log-level, ...)")
    args = parser.parse_args(argv)
    overrides = dict(CONFIGS[args.config])
    for item in args.override:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--override {item!r}: expected KEY=VALUE")
        overrides[key] = value
    run_dir = CACHE / "runs" / f"{args.broker}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir.mkdir(parents=True, exist_ok=True)
    broker: BrokerProcess | None = None
    try:
        workdir = prepare_suite(fetch_sdist())
        broker = make_broker(args.broker, run_dir, overrides)
        broker.start()
        document = run_pytest(workdir, broker, run_dir, args.pytest_args)
    except (SuiteError, BrokerError) as exc:
        print(f"kafka-python suite: cannot run: {exc}", file=sys.stderr)
        return 2
    finally:
        if broker is not None and broker.is_alive():
            try:
                broker.stop()
            except BrokerError as exc:
                print(f"warning: the broker did not stop cleanly: {exc}", file=sys.stderr)
    subset = bool(args.pytest_args)
    comparison = compare(document["outcomes"], load_allowlist(), subset=subset)  # type: ignore[arg-type]
    print(f"\nbroker settings: {' '.join(f'{k}={v}' for k, v in overrides.items())}")
    report(args.broker, document, comparison, run_dir, subset)
    if args.broker == "pykafkad":
        return 0 if comparison.holds else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
