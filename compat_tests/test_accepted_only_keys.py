"""Keys pykafkad accepts but does not act on (docs/configuration.md's "accepted only" keys and the
Kafka keys accepted with no effect) are named in one WARN line at start-up when set: none is taken,
described by DescribeConfigs and then silently ignored."""

from __future__ import annotations

from pathlib import Path

from compat_tests.broker_process import BrokerProcess

LINE = "configuration keys accepted but with no effect in pykafkad: "


def _warnings(broker: BrokerProcess) -> list[str]:
    broker.start()
    try:
        return [line for line in broker.stderr_text().splitlines() if LINE in line]
    finally:
        broker.stop()


def test_keys_with_no_effect_are_named_in_one_warning(tmp_path: Path) -> None:
    lines = _warnings(BrokerProcess(tmp_path / "logs", {
        "num.network.threads": "3", "num.io.threads": "8", "socket.send.buffer.bytes": "102400",
        "log.preallocate": "true", "log.segment.delete.delay.ms": "1000"}, name="accepted-only"))
    assert len(lines) == 1, lines
    assert " WARNING " in lines[0]
    assert lines[0].split(LINE)[1] == ("log.preallocate, log.segment.delete.delay.ms, num.io.threads, "
                                       "num.network.threads, socket.send.buffer.bytes (docs/configuration.md says "
                                       "why)")


def test_configs_server_properties_sets_none_of_them(tmp_path: Path) -> None:
    assert _warnings(BrokerProcess(tmp_path / "logs", name="stock-config")) == []
