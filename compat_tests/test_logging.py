"""The broker's own log lines: log4j levels per logger from server.properties keys, JSON lines in a
rotated file, and a client sending garbage over and over warned about a few times per window, with
the count of lines left out."""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path

import pytest

from compat_tests.broker_process import BrokerError, BrokerProcess
from compat_tests.raw_kafka import RawConnection

GARBAGE = struct.pack(">i", 5) + b"\xff\xffxyz"


def _send_garbage(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(GARBAGE)
        sock.settimeout(10)
        assert sock.recv(1) == b"", "the broker kept a connection that sent garbage"


def test_json_lines_in_a_file_levels_per_logger_and_limited_warnings(tmp_path: Path) -> None:
    log_file = tmp_path / "broker" / "pykafkad.log"
    broker = BrokerProcess(tmp_path / "logs", {
        "logging.format": "json", "logging.file": str(log_file), "log4j.rootLogger": "WARN, stdout",
        "log4j.logger.pykafkad.network": "INFO"}, name="logging")
    broker.start()
    try:
        for _ in range(12):
            _send_garbage(broker.port)
        with RawConnection(broker.port) as conn:
            conn.create_topic("logged")
            assert conn.api_versions(3)[0] == 0
    finally:
        broker.close()
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert all(set(line) >= {"time", "level", "logger", "message"} for line in lines)
    started = [line for line in lines if line["message"].startswith("pykafkad started in")]
    assert started and started[0]["logger"] == "pykafkad.network.server" and started[0]["level"] == "INFO"
    # The root at WARN: the controller's INFO lines (its election, the topic creation) are gone,
    # while pykafkad.network, set to INFO, kept its start line.
    assert not [line for line in lines if line["level"] == "INFO" and not line["logger"].startswith("pykafkad.network")]
    warned = [line for line in lines if line["level"] == "WARNING" and "closing connection from" in line["message"]]
    assert len(warned) == 5, [w["message"] for w in warned]


def test_a_bad_level_stops_the_start_with_one_line(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs", {"log4j.logger.pykafkad.replica": "LOUD"}, name="bad-level")
    with pytest.raises(BrokerError) as refused:
        broker.start(timeout=30)
    assert "log4j.logger.pykafkad.replica='LOUD': not a level" in str(refused.value)


def test_the_log_file_rotates_at_its_size_and_keeps_its_backups(tmp_path: Path) -> None:
    log_file = tmp_path / "broker" / "pykafkad.log"
    broker = BrokerProcess(tmp_path / "logs", {
        "logging.format": "json", "logging.file": str(log_file), "logging.file.max.bytes": "1024",
        "logging.file.backups": "2"}, name="rotating")
    broker.start()
    try:
        with RawConnection(broker.port) as conn:
            for n in range(20):  # each creation logs a few INFO lines
                conn.create_topic(f"rotated-{n}")
    finally:
        broker.close()
    kept = sorted(p.name for p in log_file.parent.iterdir())
    assert kept == ["pykafkad.log", "pykafkad.log.1", "pykafkad.log.2"], kept
    for path in log_file.parent.iterdir():
        text = path.read_text()
        assert len(text.encode()) <= 1024 + max(len(line.encode()) + 1 for line in text.splitlines()), path
        assert all(json.loads(line)["message"] for line in text.splitlines())
    # The newest lines are in the file itself, the oldest kept ones in the last backup.
    newest = json.loads(log_file.read_text().splitlines()[-1])["time"]
    oldest = json.loads((log_file.parent / "pykafkad.log.2").read_text().splitlines()[0])["time"]
    assert oldest <= newest
