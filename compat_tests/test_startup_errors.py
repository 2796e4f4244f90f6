"""Start-up failures: one line and a non-zero exit, and the data directory left as it was.

A listener that cannot be bound (address in use, address not on this machine) and a log dir
that a running broker holds (its `.lock`) each stop `pykafkad serve` with a single
`pykafkad: cannot start: ...` line before anything is written to the data directory: a
clean-shutdown marker from the last clean stop stays, the metadata file is not rewritten.
Also `pykafkad --version`, and what `pykafkad serve` says when it has no config file.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests.broker_process import REPO_ROOT, SERVER_PROPERTIES, BrokerProcess, free_port
from compat_tests.clients import ConfluentClient, create_topic, sample_records, unique_topic
from pykafkad import __version__
from pykafkad.replica.high_watermark_checkpoint import FILE_NAME as CHECKPOINT

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")
EXIT_TIMEOUT_S = 30.0


def _pykafkad(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the command line to completion; a broker that starts instead of failing is stopped."""
    proc = subprocess.Popen([sys.executable, "-m", "pykafkad", *args], cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=EXIT_TIMEOUT_S)
        pytest.fail(f"pykafkad {' '.join(args)} kept running instead of refusing to start\n{err[-3000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _serve(log_dir: Path, listener: str, *overrides: str) -> subprocess.CompletedProcess[str]:
    args = ["serve", str(SERVER_PROPERTIES), "--override", f"log.dirs={log_dir}", "--override", f"listeners={listener}",
            "--override", f"advertised.listeners={listener}"]
    for item in overrides:
        args += ["--override", item]
    return _pykafkad(*args)


def _one_error_line(stderr: str) -> str:
    """The only stderr line that is not a log record; there is no traceback."""
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr, stderr
    others = [line for line in stderr.splitlines() if line.strip() and not LOG_LINE.match(line)]
    assert len(others) == 1, stderr
    return others[0]


def _snapshot(root: Path, running: bool = False) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``root`` with its size and modification time; of a ``running``
    broker's directory, without the high watermark checkpoint that broker rewrites on its own."""
    if not root.exists():
        return {}
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if running and name == CHECKPOINT:
                continue
            path = Path(dirpath, name)
            st = path.stat()
            found[str(path.relative_to(root))] = (st.st_size if path.is_file() else 0, st.st_mtime_ns)
    return found


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something else already listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.fixture
def cleanly_stopped(tmp_path: Path) -> BrokerProcess:
    """A log dir with a topic and records, left by a clean stop (its marker present)."""
    broker = BrokerProcess(tmp_path / "logs", {"auto.create.topics.enable": "false"}).start()
    try:
        topic = unique_topic("startup")
        create_topic(broker.bootstrap, topic)
        ConfluentClient(broker.bootstrap).produce(topic, sample_records(5, 1_700_000_000_000))
    finally:
        broker.stop()
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    return broker


def test_listener_in_use_stops_with_one_line_and_writes_nothing(cleanly_stopped: BrokerProcess,
                                                                busy_port: int) -> None:
    before = _snapshot(cleanly_stopped.log_dir)
    result = _serve(cleanly_stopped.log_dir, f"PLAINTEXT://127.0.0.1:{busy_port}")
    assert result.returncode == 1
    assert _one_error_line(result.stderr) == \
        f"pykafkad: cannot start: listener PLAINTEXT://127.0.0.1:{busy_port}: address already in use"
    assert _snapshot(cleanly_stopped.log_dir) == before
    # The directory still serves a broker as the clean stop left it.
    cleanly_stopped.start().stop()


def test_listener_address_not_on_this_machine(tmp_path: Path) -> None:
    port = free_port()
    # 192.0.2.0/24 is reserved for documentation (TEST-NET-1): never a local address.  The bind
    # fails locally; nothing is sent anywhere.
    result = _serve(tmp_path / "logs", f"PLAINTEXT://192.0.2.1:{port}")
    assert result.returncode == 1
    assert _one_error_line(result.stderr) == \
        f"pykafkad: cannot start: listener PLAINTEXT://192.0.2.1:{port}: address not available on this machine"
    assert not (tmp_path / "logs").exists()


def test_second_broker_on_a_live_log_dir_refuses_and_changes_nothing(tmp_path: Path) -> None:
    first = BrokerProcess(tmp_path / "logs", {"auto.create.topics.enable": "false"}).start()
    try:
        topic = unique_topic("locked")
        create_topic(first.bootstrap, topic)
        client = ConfluentClient(first.bootstrap)
        client.produce(topic, sample_records(5, 1_700_000_000_000))
        before = _snapshot(first.log_dir, running=True)

        port = free_port()
        result = _serve(first.log_dir, f"PLAINTEXT://127.0.0.1:{port}", "node.id=2")
        assert result.returncode == 1
        assert _one_error_line(result.stderr) == (
            f"pykafkad: cannot start: log dir {first.log_dir} is in use by another broker "
            f"({first.log_dir / '.lock'} is locked); stop that broker or give this one other log.dirs")
        assert _snapshot(first.log_dir, running=True) == before
        # The refused broker wrote no high watermark checkpoint over the first one's.
        checkpoint = first.log_dir / CHECKPOINT
        lines = checkpoint.read_text().splitlines() if checkpoint.exists() else [f"{topic} 0 -"]
        assert any(line.startswith(f"{topic} 0 ") for line in lines), lines

        # The first broker never noticed: it serves, and its own clean stop leaves the marker.
        client.produce(topic, sample_records(5, 1_700_000_001_000, tag="after"))
        assert len(client.consume(topic, 0, 0, 10)) == 10
    finally:
        first.stop()
    assert (first.log_dir / ".kafka_cleanshutdown").exists()


def test_kill9_leaves_no_stale_lock(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs").start()
    broker.kill9()
    broker.start()
    broker.stop()


def test_version() -> None:
    result = _pykafkad("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"pykafkad {__version__}"


def test_serve_without_config_file_names_the_defaults(busy_port: int) -> None:
    # The busy listener stops it before it touches Kafka's default log dir.
    default_dir = Path("/tmp/kafka-logs")
    before = _snapshot(default_dir)
    result = _pykafkad("serve", "--override", f"listeners=PLAINTEXT://127.0.0.1:{busy_port}")
    assert result.returncode == 1
    notes = [line for line in result.stderr.splitlines() if "no config file" in line]
    assert len(notes) == 1, result.stderr
    assert "log.dirs=/tmp/kafka-logs" in notes[0] and "node.id=1" in notes[0]
    assert "listeners=" not in notes[0]  # overridden, so not a default
    assert _one_error_line(result.stderr).endswith("address already in use")
    assert _snapshot(default_dir) == before
