"""Kafka's own tools as `make tools` installs them (`kafka-topics.sh`, ... in the virtualenv's bin),
run as a Kafka user runs them against pykafkad: the README's first three commands (create a topic,
console producer, console consumer) and a real call of each other tool.  No INFO logging reaches
the terminal.  Also: a `make build` with nothing changed runs nothing (`make run` used to rebuild
and print pip's "Requirement already satisfied" lines every time).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from compat_tests.broker_process import REPO_ROOT, BrokerProcess
from compat_tests.clients import unique_topic
from pykafkad.kafka_tools import SCRIPTS

# Where `make tools` writes them, whichever Python runs the tests.
BIN = REPO_ROOT / ".venv" / "bin"
INFO_LINE = re.compile(r"\bINFO\b")
TIMEOUT_S = 90


def _script(name: str, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make tools` (`make test` does)", pytrace=False)
    result = subprocess.run([str(path), *args], input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S,
                            stdin=None if stdin is not None else subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, f"{name} {' '.join(args)}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    noise = [line for line in result.stderr.splitlines() if INFO_LINE.search(line)]
    assert not noise, f"{name} logged at INFO:\n" + "\n".join(noise[:10])
    return result


def test_the_first_three_commands(broker: BrokerProcess) -> None:
    b, topic = broker.bootstrap, unique_topic("quickstart")
    created = _script("kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "1")
    assert f"Created topic {topic}." in created.stdout
    _script("kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic, stdin="one\ntwo\nthree\n")
    consumed = _script("kafka-console-consumer.sh", "--bootstrap-server", b, "--topic", topic, "--from-beginning",
                       "--max-messages", "3", "--timeout-ms", "30000")
    assert consumed.stdout.splitlines() == ["one", "two", "three"]


def test_every_other_script_runs_against_the_broker(broker: BrokerProcess, tmp_path: Path) -> None:
    b, topic = broker.bootstrap, unique_topic("scripts")
    _script("kafka-topics.sh", "--bootstrap-server", b, "--create", "--topic", topic)
    _script("kafka-console-producer.sh", "--bootstrap-server", b, "--topic", topic, stdin="a\nb\nc\nd\n")
    assert f"{topic}:0:4" in _script("kafka-get-offsets.sh", "--bootstrap-server", b, "--topic", topic).stdout
    described = _script("kafka-topics.sh", "--bootstrap-server", b, "--describe", "--topic", topic).stdout
    assert "Leader: 1" in described
    configs = _script("kafka-configs.sh", "--bootstrap-server", b, "--describe", "--all", "--entity-type", "topics",
                      "--entity-name", topic).stdout
    assert "retention.ms=" in configs
    assert "Produce(0)" in _script("kafka-broker-api-versions.sh", "--bootstrap-server", b).stdout
    _script("kafka-consumer-groups.sh", "--bootstrap-server", b, "--list")
    assert topic in _script("kafka-log-dirs.sh", "--bootstrap-server", b, "--describe", "--topic-list", topic).stdout
    offsets = tmp_path / "delete.json"
    offsets.write_text(f'{{"partitions": [{{"topic": "{topic}", "partition": 0, "offset": 2}}], "version": 1}}')
    _script("kafka-delete-records.sh", "--bootstrap-server", b, "--offset-json-file", str(offsets))
    assert f"{topic}:0:2" in _script("kafka-get-offsets.sh", "--bootstrap-server", b, "--topic", topic,
                                     "--time", "-2").stdout
    assert set(SCRIPTS) <= {p.name for p in BIN.glob("kafka-*.sh")}


def test_kafka_acls_without_an_authorizer_says_so_as_kafka_does(broker: BrokerProcess) -> None:
    """Every API the tools call is served; ACLs answer SECURITY_DISABLED until an authorizer is set."""
    result = _script("kafka-acls.sh", "--bootstrap-server", broker.bootstrap, "--list", check=False)
    assert result.returncode == 1
    assert "SecurityDisabledException: No Authorizer is configured on the broker" in result.stdout + result.stderr


def test_no_change_build_runs_nothing() -> None:
    result = subprocess.run(["make", "-n", "build"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "maturin" not in result.stdout and "pip" not in result.stdout, (
        "`make build` would rebuild with nothing changed (or the build is stale: run `make build`):\n"
        + result.stdout)
