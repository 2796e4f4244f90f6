"""deploy/compose/ started with podman-compose, the locally built images standing in for the public
ones.  cluster.yml: three brokers on ZooKeeper; a client on the host produces with acks=all to a
replication-factor-3 topic, one broker container is killed, producing and consuming go on, and
nothing acknowledged is lost.  single.yml: one broker whose Kafka listener, console, schema registry
and REST proxy all answer from the host.  Each run ends with ``down``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from deploy_tests import podman as containers

REPO_ROOT = Path(__file__).resolve().parent.parent
CLUSTER = REPO_ROOT / "deploy" / "compose" / "cluster.yml"
SINGLE = REPO_ROOT / "deploy" / "compose" / "single.yml"
BOOTSTRAP = "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
HOST_PORTS = (9092, 9093, 9094, 9644, 9645, 9646, 8081, 8082)
BATCH = 300


def _compose(env: dict[str, str], *args: str, timeout: float = 300,
             file: Path = CLUSTER) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "podman_compose", "-f", str(file), *args], env=env,
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise containers.PodmanError(f"podman-compose {' '.join(args)} exited {result.returncode}:\n"
                                     f"{(result.stdout + result.stderr)[-4000:]}")
    return result


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wait_for_brokers(admin: AdminClient, count: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if len(admin.list_topics(timeout=5).brokers) == count:
                return
        except KafkaException:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{count} brokers did not register within {timeout:.0f} s")
        time.sleep(0.5)


def _produce(values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "acks": "all", "enable.idempotence": True})
    failed: list[str] = []
    for value in values:
        producer.produce("replicated", value, on_delivery=lambda e, m: failed.append(str(e)) if e else None)
    assert producer.flush(120) == 0
    assert failed == []


@pytest.fixture
def cluster(podman_env: dict[str, str], image: str, zookeeper_image: str) -> Iterator[dict[str, str]]:
    busy = [p for p in HOST_PORTS if not _port_free(p)]
    if busy:
        pytest.fail(f"cluster.yml publishes 127.0.0.1:{busy[0]}, which is in use here")
    env = {**podman_env, "PYKAFKAD_IMAGE": image, "ZOOKEEPER_IMAGE": zookeeper_image}
    _compose(env, "down", "-v")
    _compose(env, "up", "-d")
    yield env
    _compose(env, "down", "-v", "-t", "30")


def test_a_broker_killed_loses_nothing_acknowledged(cluster: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    _wait_for_brokers(admin, 3)
    admin.create_topics([NewTopic("replicated", 3)])["replicated"].result(60)
    described = admin.list_topics("replicated", timeout=30).topics["replicated"]
    assert all(len(p.replicas) == 3 for p in described.partitions.values())

    before = [f"before-{i}".encode() for i in range(BATCH)]
    _produce(before)
    [victim] = containers.podman(cluster, "ps", "--filter", "label=com.docker.compose.service=broker-2",
                                 "--format", "{{.Names}}").stdout.split()
    containers.podman(cluster, "kill", "--signal", "KILL", victim)
    after = [f"after-{i}".encode() for i in range(BATCH)]
    # Two replicas of three are left: min.insync.replicas=2 still takes acks=all.
    _produce(after)

    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "compose-check",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["replicated"])
    got: list[bytes] = []
    deadline = time.monotonic() + 120
    try:
        while len(got) < 2 * BATCH and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.append(message.value())
    finally:
        consumer.close()
    assert sorted(got) == sorted(before + after)


def test_the_single_broker_serves_kafka_console_registry_and_proxy(podman_env: dict[str, str], image: str) -> None:
    busy = [p for p in (9092, 9644, 8081, 8082) if not _port_free(p)]
    if busy:
        pytest.fail(f"single.yml publishes 127.0.0.1:{busy[0]}, which is in use here")
    env = {**podman_env, "PYKAFKAD_IMAGE": image}
    _compose(env, "down", "-v", file=SINGLE)
    _compose(env, "up", "-d", file=SINGLE)
    try:
        admin = AdminClient({"bootstrap.servers": "127.0.0.1:9092"})
        _wait_for_brokers(admin, 1)
        producer = Producer({"bootstrap.servers": "127.0.0.1:9092", "acks": "all"})
        producer.produce("single", b"through the external listener")
        assert producer.flush(60) == 0
        del producer
        deadline = time.monotonic() + 60
        while True:
            try:
                topics = httpx.get("http://127.0.0.1:8082/topics", timeout=5)
                if topics.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the REST proxy did not answer"
            time.sleep(0.5)
        assert "single" in topics.json()
        assert httpx.get("http://127.0.0.1:8081/subjects", timeout=10).json() == []
        assert httpx.get("http://127.0.0.1:9644/readyz", timeout=10).status_code == 200
        assert "pykafkad" in httpx.get("http://127.0.0.1:9644/", timeout=10).text
    finally:
        _compose(env, "down", "-v", "-t", "30", file=SINGLE)
