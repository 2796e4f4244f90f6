"""Client-metrics subscriptions (KIP-714's CLIENT_METRICS config resource), as Kafka 4.4.0 keeps them.

``kafka-client-metrics.sh`` creates, describes, lists and deletes subscriptions through
IncrementalAlterConfigs, DescribeConfigs and ListConfigResources on resource type 16.  Each step
goes to pykafkad and to the reference Kafka 4.4.0 and the answers must match: the tool's output,
and the raw answers to every kind of bad input (unknown key, bad interval, a match pattern on an
unknown property or one RE2 refuses, APPEND, an empty name).  Kafka applies a change to its
brokers' caches a moment after answering, so each describe waits until the change shows.  A
subscription outlives a restart of pykafkad, and one whose every key is deleted is gone.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.client_metrics_support import APPEND, DELETE, SET, alter, describe, listed
from compat_tests.clients import unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

SETTLE_TIMEOUT_S = 30.0


def _described_once_settled(conn: RawConnection, name: str, expected: dict[str, str]) -> tuple[int, list]:
    """The description of ``name`` once the keys set show ``expected`` values (Kafka's brokers apply
    a change a moment after its controller acknowledged it)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while True:
        described = describe(conn, name)
        values = {entry[0]: entry[1] for entry in described[1]}
        if all(values.get(k) == v for k, v in expected.items()):
            return described
        assert time.monotonic() < deadline, (name, expected, described)
        time.sleep(0.05)


def _raw_steps(port: int) -> dict[str, Any]:
    prefix = unique_topic("subscription")
    sub = f"{prefix}-a/b"  # a name with a slash, which Kafka takes
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        seen["unknown name"] = describe(conn, f"{prefix}-none")
        seen["set"] = alter(conn, sub, [("interval.ms", SET, "1000"),
                                         ("metrics", SET, "org.apache.kafka.producer.,a.b"),
                                         ("match", SET, "client_id=abc.*,client_software_name=java")])
        seen["described"] = _described_once_settled(conn, sub, {"interval.ms": "1000"})
        bad = {
            "unknown key": [("nope", SET, "1")],
            "interval not a number": [("interval.ms", SET, "abc")],
            "interval too short": [("interval.ms", SET, "50")],
            "interval too long": [("interval.ms", SET, "3600001")],
            "match on an unknown property": [("match", SET, "foo=bar")],
            "match not a regex": [("match", SET, "client_id=((")],
            "match with a lookbehind": [("match", SET, "client_id=(?<=a)b")],
            "append": [("metrics", APPEND, "c.")],
        }
        for label, ops in bad.items():
            seen[label] = alter(conn, sub, ops)
        seen["empty name"] = alter(conn, "", [("interval.ms", SET, "1000")])
        seen["unchanged after refusals"] = describe(conn, sub)
        seen["listed"] = listed(conn, prefix)
        seen["interval deleted"] = alter(conn, sub, [("interval.ms", DELETE, None)])
        seen["default interval"] = _described_once_settled(conn, sub, {"interval.ms": "300000"})
        seen["all deleted"] = alter(conn, sub, [("metrics", DELETE, None), ("match", DELETE, None)])
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while (names := listed(conn, prefix)) and time.monotonic() < deadline:
            time.sleep(0.05)
        seen["listed after deleting every key"] = names
    return seen


def test_subscription_configs_answer_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _raw_steps(broker.port)
    assert ours["set"] == (ErrorCode.NONE, None)
    assert ours["match with a lookbehind"][0] == ErrorCode.INVALID_CONFIG
    assert ours["listed"] == ["<p>-a/b"] and ours["listed after deleting every key"] == []
    theirs = _raw_steps(reference_kafka.port)
    differences = {k: (v, theirs[k]) for k, v in ours.items() if v != theirs[k]}
    assert not differences, "\n".join(f"{k}:\n  pykafkad {a}\n  Kafka    {b}" for k, (a, b) in differences.items())


def _tool(broker: BrokerProcess, *args: str) -> tuple[int, str]:
    result = run_tool("kafka-client-metrics", ["--bootstrap-server", broker.bootstrap, *args], check=False)
    return result.returncode, result.stdout


def _tool_steps(broker: BrokerProcess) -> list[tuple[int, str]]:
    name = unique_topic("tool-subscription")
    steps = [
        _tool(broker, "--alter", "--name", name, "--metrics", "org.apache.kafka.consumer.", "--interval", "5000",
              "--match", "client_id=app-.*"),
        _tool(broker, "--alter", "--name", name, "--interval", "50"),
    ]
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while "interval.ms=5000" not in (described := _tool(broker, "--describe", "--name", name))[1]:
        assert time.monotonic() < deadline, described
    steps.append(described)
    steps.append(_tool(broker, "--delete", "--name", name))
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while name in (listed := _tool(broker, "--list"))[1]:
        assert time.monotonic() < deadline, listed
    steps.append((listed[0], ""))
    return [(code, out.replace(name, "<name>")) for code, out in steps]


def test_kafka_client_metrics_tool_as_on_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _tool_steps(broker)
    assert ours[0] == (0, "Altered client metrics config for <name>.\n")
    assert ours[1][0] != 0
    assert ours == _tool_steps(reference_kafka)


@pytest.mark.compat_timeout(120)
def test_a_subscription_survives_a_restart(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("client-metrics-restart")
    with RawConnection(broker.port) as conn:
        assert alter(conn, "kept", [("metrics", SET, "*"), ("interval.ms", SET, "60000")]) == (0, None)
    broker.restart()
    with RawConnection(broker.port) as conn:
        values = {entry[0]: (entry[1], entry[2]) for entry in describe(conn, "kept")[1]}
        assert values == {"interval.ms": ("60000", 7), "match": ("", 5), "metrics": ("*", 7)}
        assert listed(conn, "kept") == ["<p>"]
