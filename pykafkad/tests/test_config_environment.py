"""KAFKA_* environment variables as config keys (config_environment), in the convention of Kafka's
container images, and how they layer between the file and --override (config.load_config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykafkad.config import ConfigError, load_config
from pykafkad.config_environment import environment_config, key_of


@pytest.mark.parametrize(("variable", "key"), [
    ("KAFKA_ADVERTISED_LISTENERS", "advertised.listeners"),
    ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "offsets.topic.replication.factor"),
    ("KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG",
     "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ("KAFKA_LOG4J_LOGGER_KAFKA_REQUEST___LOG", "log4j.logger.kafka.request-log"),
])
def test_underscores_stand_for_dots_underscores_and_dashes(variable: str, key: str) -> None:
    assert key_of(variable) == key


def test_a_run_of_four_underscores_is_refused() -> None:
    with pytest.raises(ConfigError, match="KAFKA_LOG____DIRS: a run of 4 underscores"):
        key_of("KAFKA_LOG____DIRS")


def test_jvm_settings_and_kubernetes_service_variables_are_not_keys() -> None:
    environ = {
        "KAFKA_HEAP_OPTS": "-Xmx1G", "KAFKA_OPTS": "-Dx=y", "KAFKA_JMX_OPTS": "", "KAFKA_VERSION": "4.4.0",
        # What Kubernetes sets in every pod for a Service named "kafka".
        "KAFKA_PORT": "tcp://10.0.0.7:9092", "KAFKA_PORT_9092_TCP": "tcp://10.0.0.7:9092",
        "KAFKA_PORT_9092_TCP_ADDR": "10.0.0.7", "KAFKA_PORT_9092_TCP_PORT": "9092",
        "KAFKA_PORT_9092_TCP_PROTO": "tcp", "KAFKA_SERVICE_HOST": "10.0.0.7", "KAFKA_SERVICE_PORT": "9092",
        "KAFKA_SERVICE_PORT_CLIENT": "9092",
        "PATH": "/usr/bin", "KAFKA_NUM_PARTITIONS": "3",
    }
    assert environment_config(environ) == {"num.partitions": "3"}


def test_an_unknown_key_is_refused_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="KAFKA_LOG_RETENTION_HOURZ names log.retention.hourz, which is not"):
        environment_config({"KAFKA_LOG_RETENTION_HOURZ": "5"})


def test_the_environment_is_over_the_file_and_under_overrides(tmp_path: Path) -> None:
    properties = tmp_path / "server.properties"
    properties.write_text("num.partitions=2\nlog.retention.hours=10\nnode.id=1\n")
    environment = environment_config({"KAFKA_NUM_PARTITIONS": "3", "KAFKA_LOG_RETENTION_HOURS": "20",
                                      "KAFKA_BROKER_ID": "4"})
    config = load_config(properties, ["log.retention.hours=30"], environment)
    assert config["num.partitions"] == 3
    assert config["log.retention.hours"] == 30
    # An id from the environment replaces the file's (node.id=1), as an --override's does.
    assert config.node_id == 4


def test_shown_config_hides_passwords_listener_ones_included() -> None:
    environment = environment_config({
        "KAFKA_SSL_KEY_PASSWORD": "s3cret",
        "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG": 'x required password="s3cret";',
        "KAFKA_NUM_PARTITIONS": "3"})
    shown = load_config(None, [], environment).shown()
    assert "ssl.key.password = [hidden]" in shown
    assert "listener.name.sasl_plaintext.plain.sasl.jaas.config = [hidden]" in shown
    assert "num.partitions = 3" in shown
    assert "advertised.listeners = null" in shown
    assert not any("s3cret" in line for line in shown)
