"""``pykafkad serve --from-env``: KAFKA_* environment variables configure a real broker process (as
Kafka's container images take them), over the file and under --override; ``--print-config`` shows
every value with passwords hidden; a misspelt key stops the start with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic

from compat_tests.broker_process import SERVER_PROPERTIES, BrokerProcess

REPO_ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT = {"KAFKA_NUM_PARTITIONS": "3", "KAFKA_LOG_RETENTION_HOURS": "20", "KAFKA_SSL_KEY_PASSWORD": "s3cret",
               # Kubernetes sets these for a Service named "kafka"; they are not keys.
               "KAFKA_PORT": "tcp://10.0.0.7:9092", "KAFKA_SERVICE_HOST": "10.0.0.7"}


class _EnvironmentBroker(BrokerProcess):
    def command(self) -> list[str]:
        return super().command() + ["--from-env", "--print-config"]


def test_environment_variables_configure_the_broker(tmp_path: Path) -> None:
    broker = _EnvironmentBroker(tmp_path / "data", {"log.retention.hours": "30"})
    broker.environment = ENVIRONMENT
    broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        resource = ConfigResource(ConfigResource.Type.BROKER, "1")
        described = admin.describe_configs([resource])[resource].result(30)
        assert described["num.partitions"].value == "3"
        assert described["num.partitions"].source == ConfigSource.STATIC_BROKER_CONFIG.value
        # --override wins over the environment.
        assert described["log.retention.hours"].value == "30"
        admin.create_topics([NewTopic("from-env")])["from-env"].result(30)
        assert len(admin.list_topics("from-env", timeout=30).topics["from-env"].partitions) == 3
        log = broker.stderr_text()
        assert "\tnum.partitions = 3" in log
        assert "\tssl.key.password = [hidden]" in log
        assert "s3cret" not in log
    finally:
        broker.close()


def test_a_misspelt_variable_stops_the_start_with_one_line() -> None:
    env = {**os.environ, "KAFKA_LOG_RETENTION_HOURZ": "5", "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run([sys.executable, "-m", "pykafkad", "serve", str(SERVER_PROPERTIES), "--from-env"],
                            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "pykafkad: bad configuration: environment variable KAFKA_LOG_RETENTION_HOURZ names log.retention.hourz, "
        "which is not a broker config key (docs/configuration.md lists them; _ is '.', __ is '_')"]
