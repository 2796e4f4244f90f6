"""kcat (librdkafka's command-line client, Debian package) against pykafkad: `-L` metadata,
`-P` produce with keys and headers, `-C -e` consume from the beginning and from an offset."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import (
    ConfluentClient,
    KafkaPythonClient,
    Rec,
    assert_records_match,
    create_topic,
    unique_topic,
)

KCAT_TIMEOUT_S = 60.0


def kcat(broker: BrokerProcess, *args: str, stdin: str | None = None) -> str:
    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        pytest.fail("kcat is not installed: run `make system-deps` (apt-get install kcat)", pytrace=False)
    cmd = [exe, "-b", broker.bootstrap, "-X", "socket.timeout.ms=15000", *args]
    try:
        result = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=KCAT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} did not finish within {KCAT_TIMEOUT_S}s; stderr: {exc.stderr!r}")
    assert result.returncode == 0, f"{' '.join(cmd)} exited {result.returncode}\n{result.stderr}"
    return result.stdout


def test_kcat_metadata(broker: BrokerProcess) -> None:
    topic = unique_topic("kcat-md")
    create_topic(broker.bootstrap, topic, partitions=3)
    md = json.loads(kcat(broker, "-L", "-J", "-t", topic))
    assert [(b["id"], b["name"]) for b in md["brokers"]] == [(1, f"127.0.0.1:{broker.port}")]
    [t] = md["topics"]
    assert t["topic"] == topic and "error" not in t, t
    parts = sorted(t["partitions"], key=lambda p: p["partition"])
    assert [p["partition"] for p in parts] == [0, 1, 2]
    for p in parts:
        assert p["leader"] == 1
        assert [r["id"] for r in p["replicas"]] == [1]
        assert [r["id"] for r in p["isrs"]] == [1]

    all_md = kcat(broker, "-L")
    assert f'topic "{topic}" with 3 partitions' in all_md, all_md


def test_kcat_produce(broker: BrokerProcess) -> None:
    topic = unique_topic("kcat-p")
    create_topic(broker.bootstrap, topic)
    lines = [f"k{i}:value {i} with spaces" for i in range(15)]
    kcat(
        broker,
        "-P",
        "-t",
        topic,
        "-p",
        "0",
        "-K",
        ":",
        "-H",
        "source=kcat",
        "-H",
        "n=1",
        stdin="\n".join(lines) + "\n",
    )
    expected = [
        Rec(f"value {i} with spaces".encode(), f"k{i}".encode(), (("source", b"kcat"), ("n", b"1")))
        for i in range(15)
    ]
    for client_cls in (ConfluentClient, KafkaPythonClient):
        got = client_cls(broker.bootstrap).consume(topic, 0, "earliest", count=15)
        assert_records_match(expected, got, list(range(15)), check_timestamps=False)


@pytest.mark.parametrize("codec", ["none", "snappy", "zstd"])
def test_kcat_produce_compressed(broker: BrokerProcess, codec: str) -> None:
    topic = unique_topic(f"kcat-z-{codec}")
    create_topic(broker.bootstrap, topic)
    kcat(broker, "-P", "-t", topic, "-p", "0", "-z", codec, stdin="".join(f"z{i}\n" for i in range(50)))
    got = ConfluentClient(broker.bootstrap).consume(topic, 0, "earliest", count=50)
    assert [g.value for g in got] == [f"z{i}".encode() for i in range(50)]


def test_kcat_consume(broker: BrokerProcess) -> None:
    topic = unique_topic("kcat-c")
    create_topic(broker.bootstrap, topic)
    sent = [Rec(f"v{i}".encode(), f"k{i}".encode(), (("h", f"{i}".encode()),)) for i in range(12)]
    KafkaPythonClient(broker.bootstrap).produce(topic, sent, compression="gzip")

    out = kcat(broker, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o|%k|%s|%h\n")
    assert out.splitlines() == [f"{i}|k{i}|v{i}|h={i}" for i in range(12)], out

    out = kcat(broker, "-C", "-t", topic, "-p", "0", "-o", "7", "-e", "-q", "-f", "%o:%s\n")
    assert out.splitlines() == [f"{i}:v{i}" for i in range(7, 12)], out

    out = kcat(broker, "-C", "-t", topic, "-p", "0", "-o", "-3", "-e", "-q", "-f", "%o:%s\n")
    assert out.splitlines() == [f"{i}:v{i}" for i in range(9, 12)], out
