"""The per-peer warning limit and the JSON line format of broker_logging."""

from __future__ import annotations

import json
import logging

from pykafkad.broker_logging import WARNINGS_PER_WINDOW, WINDOW_S, JsonFormatter, PerPeerWarningLimit


def _warning(peer: str) -> logging.LogRecord:
    return logging.LogRecord("pykafkad.network.connection", logging.WARNING, __file__, 1,
                             "closing connection from %s: %s", (peer, "garbage"), None)


def test_a_peer_is_limited_per_window_and_told_how_many_were_left_out() -> None:
    now = [0.0]
    limit = PerPeerWarningLimit(clock=lambda: now[0])
    passed = [limit.filter(_warning(f"10.0.0.1:{port}")) for port in range(1000, 1012)]
    assert passed == [True] * WARNINGS_PER_WINDOW + [False] * (12 - WARNINGS_PER_WINDOW)
    assert limit.filter(_warning("10.0.0.2:5000")), "another address has a window of its own"
    now[0] = WINDOW_S + 1
    record = _warning("10.0.0.1:2000")
    assert limit.filter(record)
    assert record.getMessage() == ("closing connection from 10.0.0.1:2000: garbage (7 similar lines about 10.0.0.1 "
                                   "left out in the last window)")
    info = logging.LogRecord("x", logging.INFO, __file__, 1, "fine %s", ("10.0.0.1:1",), None)
    assert all(limit.filter(info) for _ in range(20))


def test_json_lines() -> None:
    record = logging.LogRecord("pykafkad.replica", logging.ERROR, __file__, 1, "broke %d", (3,), None)
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "ERROR" and line["logger"] == "pykafkad.replica" and line["message"] == "broke 3"
