"""The image built from the repository's Dockerfile, run with podman: a client on the host
produces and consumes through a published port, KAFKA_* variables configure the broker, a stop is
the controlled shutdown, a restart keeps the data in the volume, a misspelt variable stops the
container with one line, and with no configuration at all it is the embedded single broker."""

from __future__ import annotations

import json
import socket
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

from deploy_tests import podman as containers

RECORDS = 100


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _consume_all(bootstrap: str, topic: str, group: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < RECORDS and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.append(message.value())
    finally:
        consumer.close()
    return got


def test_a_client_on_the_host_and_a_restart_that_keeps_the_data(podman_env: dict[str, str], image: str,
                                                                 volume: str) -> None:
    port = _free_port()
    bootstrap = f"127.0.0.1:{port}"
    name = "pykafkad-test-host-client"
    containers.remove(podman_env, name)
    # The port inside is the port outside, so that the advertised address works on both sides:
    # for the client on the host, and for the broker's own clients (registry, REST proxy) inside.
    containers.podman(podman_env, "run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:{port}",
                      "-v", f"{volume}:/var/lib/pykafkad",
                      "-e", f"KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:{port}",
                      "-e", f"KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://{bootstrap}",
                      "-e", "KAFKA_NUM_PARTITIONS=3", "-e", "KAFKA_SSL_KEY_PASSWORD=s3cret", image)
    try:
        containers.wait_healthy(podman_env, name)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        resource = ConfigResource(ConfigResource.Type.BROKER, "1")
        described = admin.describe_configs([resource])[resource].result(30)
        assert described["num.partitions"].value == "3"
        assert described["num.partitions"].source == ConfigSource.STATIC_BROKER_CONFIG.value

        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        for i in range(RECORDS):
            producer.produce("from-the-host", f"record-{i}".encode())
        assert producer.flush(60) == 0
        del producer  # no reconnecting while the broker is stopped below
        expected = sorted(f"record-{i}".encode() for i in range(RECORDS))
        assert sorted(_consume_all(bootstrap, "from-the-host", "first")) == expected
        assert len(admin.list_topics("from-the-host", timeout=30).topics["from-the-host"].partitions) == 3

        assert containers.podman(podman_env, "exec", name, "id", "-u").stdout.strip() == "1000"
        printed = containers.logs(podman_env, name)
        assert "\tnum.partitions = 3" in printed
        assert "\tssl.key.password = [hidden]" in printed
        assert "s3cret" not in printed

        containers.podman(podman_env, "stop", "-t", "60", name, timeout=90)
        assert containers.inspect(podman_env, name)["State"]["ExitCode"] == 0
        stopped = containers.logs(podman_env, name)
        assert "received SIGTERM, shutting down" in stopped
        assert "pykafkad stopped" in stopped

        containers.podman(podman_env, "start", name)
        containers.wait_healthy(podman_env, name)
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
        try:
            ends = [consumer.get_watermark_offsets(TopicPartition("from-the-host", p), 30)[1] for p in range(3)]
        finally:
            consumer.close()
        assert sum(ends) == RECORDS
        assert sorted(_consume_all(bootstrap, "from-the-host", "after-restart")) == expected
    finally:
        containers.remove(podman_env, name)


def test_with_no_configuration_it_is_the_single_broker_advertising_its_host_name(podman_env: dict[str, str],
                                                                                 image: str) -> None:
    name = "pykafkad-test-defaults"
    containers.remove(podman_env, name)
    containers.podman(podman_env, "run", "-d", "--name", name, "--hostname", "broker-under-test", image)
    try:
        containers.wait_healthy(podman_env, name)
        # A command instead of the broker runs as given: here the CLI, inside the container.
        info = containers.podman(podman_env, "exec", name, "pykafkad", "cluster", "info", "--bootstrap-server",
                                 "127.0.0.1:9092", "--json").stdout
        assert '"broker-under-test"' in info and "9092" in info
        printed = containers.logs(podman_env, name)
        assert "\tadvertised.listeners = PLAINTEXT://broker-under-test:9092" in printed
        assert "\tlisteners = PLAINTEXT://0.0.0.0:9092" in printed
    finally:
        containers.remove(podman_env, name)


def test_a_misspelt_variable_stops_the_container_with_one_line(podman_env: dict[str, str], image: str) -> None:
    result = containers.podman(podman_env, "run", "--rm", "-e", "KAFKA_LOG_RETENTION_HOURZ=1", image, check=False,
                               timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1:] == [
        "pykafkad: bad configuration: environment variable KAFKA_LOG_RETENTION_HOURZ names log.retention.hourz, "
        "which is not a broker config key (docs/configuration.md lists them; _ is '.', __ is '_')"]


# What the image adds to its Debian base: docs/deploy.md reports it beside apache/kafka's size.
LAYERS_ABOVE_BASE_MAX = 200_000_000


def test_the_image_declares_its_ports_volume_user_and_health_check(podman_env: dict[str, str], image: str,
                                                                   base_image: str) -> None:
    config = containers.podman(podman_env, "image", "inspect", image).stdout
    described = json.loads(config)[0]
    settings = described["Config"]
    assert set(settings["ExposedPorts"]) == {"9092/tcp", "9644/tcp", "8081/tcp", "8082/tcp"}
    assert settings["User"] == "pykafkad"
    assert set(settings["Volumes"]) == {"/var/lib/pykafkad"}
    assert settings["Entrypoint"][:2] == ["tini", "--"]
    assert "/readyz" in " ".join(described["Healthcheck"]["Test"])
    base = json.loads(containers.podman(podman_env, "image", "inspect", base_image).stdout)[0]
    assert described["Size"] - base["Size"] < LAYERS_ABOVE_BASE_MAX
