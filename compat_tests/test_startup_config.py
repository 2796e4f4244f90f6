"""Start-up configuration: Kafka key names; a bad value stops the broker naming the key; unknown keys warn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from compat_tests.broker_process import BrokerProcess, free_port

REPO_ROOT = Path(__file__).resolve().parent.parent


def _serve(tmp_path: Path, *overrides: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pykafkad", "serve", str(config or REPO_ROOT / "configs" / "server.properties"),
           "--override", f"log.dirs={tmp_path / 'logs'}",
           "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}"]
    for item in overrides:
        cmd += ["--override", item]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)


def test_bad_value_stops_startup_naming_the_key(tmp_path: Path) -> None:
    result = _serve(tmp_path, "num.partitions=lots")
    assert result.returncode == 2
    assert "num.partitions" in result.stderr and "integer" in result.stderr
    result = _serve(tmp_path, "log.message.timestamp.type=Whenever")
    assert result.returncode == 2 and "log.message.timestamp.type" in result.stderr


def test_compression_levels_out_of_kafkas_ranges_stop_startup(tmp_path: Path) -> None:
    # As Kafka 4.1's ServerLogConfigs validate them (the topic-level keys already were).
    for setting, problem in (("compression.lz4.level=18", "Value must be no more than 17"),
                             ("compression.zstd.level=23", "Value must be no more than 22"),
                             ("compression.gzip.level=0", "Value must be between 1 and 9 or equal to -1")):
        result = _serve(tmp_path, setting)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert setting.split("=")[0] in lines[0] and problem in lines[0], result.stderr


def test_bad_listener_stops_startup(tmp_path: Path) -> None:
    result = _serve(tmp_path, "listeners=SSL://127.0.0.1:9093")
    assert result.returncode == 2 and "listeners" in result.stderr


def test_missing_config_file_is_reported(tmp_path: Path) -> None:
    result = _serve(tmp_path, config=tmp_path / "nope.properties")
    assert result.returncode == 2 and "nope.properties" in result.stderr


def test_unknown_key_warns_and_broker_serves(tmp_path: Path) -> None:
    b = BrokerProcess(tmp_path / "logs", {"made.up.key": "1", "num.network.threads": "3"}, name="unknown-key")
    b.start()
    try:
        assert b.accepts_connections()
        log = b.stderr_text()
        assert "unknown configuration key made.up.key" in log
        assert "unknown configuration key num.network.threads" not in log  # a stock Kafka key, accepted
    finally:
        b.stop()


def test_a_broker_does_not_load_the_commands_for_people(tmp_path: Path) -> None:
    # `pykafkad serve` is measured against Kafka's start (benchmarks/): the topic/group/reassign
    # commands' librdkafka and rich cost about 0.1 s and have no place in a broker process.
    b = BrokerProcess(tmp_path / "logs", {}, name="lean-start")
    b.start()
    try:
        assert b.proc is not None
        mapped = Path(f"/proc/{b.proc.pid}/maps").read_text()
        assert "confluent_kafka" not in mapped and "librdkafka" not in mapped
    finally:
        b.stop()
