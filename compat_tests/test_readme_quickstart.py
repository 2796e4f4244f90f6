"""The README's quickstart, run as written: its commands and their output come out of README.md.

The "## Quickstart" section of README.md starts a broker with ``make run`` and then shows terminal
sessions: ```` ```console ```` blocks of ``$ command`` lines, each followed by what it prints.  This
test starts a fresh broker with the command line of the Makefile's ``run`` target (its overrides,
with a free port for the metrics listener, plus a free broker port and an empty data directory),
runs every command of those blocks in order with bash from the repository root, and checks that
each succeeds and prints what the README shows (whitespace between words aside: the tables are
padded).  The README's ``127.0.0.1:9092`` is replaced by the test broker's address, and
``PYKAFKAD_BROKERS`` points pykafkad's commands at it.  So changing a command or its output in the
README changes what is tested, and the first screen cannot go stale.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compat_tests.broker_process import REPO_ROOT, BrokerProcess, free_port

README = REPO_ROOT / "README.md"
MAKEFILE = REPO_ROOT / "Makefile"
VENV_BIN = REPO_ROOT / ".venv" / "bin"
README_BOOTSTRAP = "127.0.0.1:9092"
README_REST = "127.0.0.1:8082"
COMMAND_TIMEOUT_S = 120
# What the issue asks the first screen to show; a quickstart that loses one of them fails here.
REQUIRED = ("pykafkad topic create", "pykafkad produce", "pykafkad consume",
            "kafka-console-producer.sh", "kafka-console-consumer.sh")


@dataclass
class Step:
    """One ``$ command`` of a console block and the lines the README shows it printing."""

    command: str
    expected: list[str] = field(default_factory=list)


def quickstart_section(text: str) -> str:
    start = text.index("\n## Quickstart\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def quickstart_steps(section: str) -> list[Step]:
    """The ``$`` commands of the section's console blocks, in order, with their output lines."""
    steps: list[Step] = []
    for block in re.findall(r"^```console\n(.*?)^```", section, re.DOTALL | re.MULTILINE):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:].strip()))
            elif steps:
                steps[-1].expected.append(line)
            else:
                raise AssertionError(f"README quickstart: output before any command: {line!r}")
    return steps


def make_run_arguments() -> list[str]:
    """The arguments after ``pykafkad`` of the Makefile's ``run`` recipe (``serve CONFIG --override ...``)."""
    lines = MAKEFILE.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(r"^run\s*:", line))
    recipe = ""
    for line in lines[at + 1:]:
        if not line.startswith("\t"):
            break
        recipe += line.strip().removesuffix("\\") + " "
        if not line.rstrip().endswith("\\"):
            break
    argv = shlex.split(recipe.replace("$(VENV)", ".venv"))
    assert argv[:2] == [".venv/bin/pykafkad", "serve"], f"make run runs {argv[:2]}, not pykafkad serve"
    return argv[1:]


def normalized(lines: list[str]) -> list[str]:
    return [" ".join(line.split()) for line in lines if line.strip()]


class MakeRunBroker(BrokerProcess):
    """A broker started with ``make run``'s command line, moved to a free port and a fresh data dir."""

    def __init__(self, log_dir: Path) -> None:
        super().__init__(log_dir, name="make-run")
        self.http_ports = {"metrics": free_port(), "schema.registry": free_port(), "rest": free_port()}

    @property
    def rest_address(self) -> str:
        return f"127.0.0.1:{self.http_ports['rest']}"

    def command(self) -> list[str]:
        args = [re.sub(r"^(metrics|schema\.registry|rest)\.listener=http://127\.0\.0\.1:\d+$",
                       lambda m: f"{m.group(1)}.listener=http://127.0.0.1:{self.http_ports[m.group(1)]}", a)
                for a in make_run_arguments()]
        listener = f"PLAINTEXT://127.0.0.1:{self.port}"
        for key, value in (("listeners", listener), ("advertised.listeners", listener), ("log.dirs", self.log_dir)):
            args += ["--override", f"{key}={value}"]
        return [sys.executable, "-m", "pykafkad", *args]


def test_the_quickstart_section_has_the_commands_a_newcomer_needs() -> None:
    section = quickstart_section(README.read_text())
    assert re.search(r"^```sh\nmake run\n```", section, re.MULTILINE), "the quickstart no longer starts with make run"
    steps = quickstart_steps(section)
    commands = "\n".join(s.command for s in steps)
    for needed in REQUIRED:
        assert needed in commands, f"the README quickstart has no `{needed}` command"
    for step in steps:
        if "pykafkad consume" in step.command or "console-consumer" in step.command or "/records" in step.command:
            assert normalized(step.expected), f"the README shows no output for `{step.command}`"


@pytest.mark.compat_timeout(360)
def test_the_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    steps = quickstart_steps(quickstart_section(README.read_text()))
    assert steps, "no console block in the README's quickstart"
    for tool in ("kafka-console-producer.sh", "kafka-console-consumer.sh"):
        if not (VENV_BIN / tool).exists():
            pytest.fail(f"{VENV_BIN / tool} is missing: run `make tools` (`make test` does)", pytrace=False)
    broker = MakeRunBroker(tmp_path / "data")
    broker.start()
    try:
        env = dict(os.environ, PYKAFKAD_BROKERS=broker.bootstrap,
                   PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        for step in steps:
            command = step.command.replace(README_BOOTSTRAP, broker.bootstrap).replace(README_REST,
                                                                                       broker.rest_address)
            expected = [line.replace(README_REST, broker.rest_address) for line in step.expected]
            done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=REPO_ROOT, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=COMMAND_TIMEOUT_S, check=False)
            assert done.returncode == 0, (f"README quickstart: `{step.command}` exited {done.returncode}\n"
                                          f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
            assert normalized(done.stdout.splitlines()) == normalized(expected), (
                f"README quickstart: `{step.command}` printed\n{done.stdout}\nbut the README shows\n"
                + "\n".join(expected))
    finally:
        broker.stop()
