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
