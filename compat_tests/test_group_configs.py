"""Group configs (config resource type 32), as Kafka 4.4.0 keeps them.

``kafka-configs.sh --entity-type groups`` alters and describes a group's configs through
IncrementalAlterConfigs and DescribeConfigs.  Each step goes to pykafkad and to the reference Kafka
4.4.0 and the answers must match: the tool's output, and the raw answers to every kind of bad input
(unknown key, a value of the wrong type or under its lower bound, outside the broker's
``group.*.min/max.*`` bounds, duplicate tags, an unknown assignor, APPEND, a null value, an empty
group name, a group named twice).  pykafkad runs with the reference's static settings, so the
synonyms both describe are the same.  Kafka applies a change to its broker's cache a moment after
answering, so each describe waits until the change shows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.conftest import REFERENCE_OVERRIDES
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS, LIST_CONFIG_RESOURCES = 32, 33, 44, 74
GROUP = 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
SETTLE_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def group_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """pykafkad with the reference Kafka's static settings (one of them a ``group.consumer.*`` key,
    which group configs show as a synonym)."""
    broker = BrokerProcess(tmp_path_factory.mktemp("group-configs") / "logs", REFERENCE_OVERRIDES,
                           name="group-configs")
    broker.start()
    yield broker
    broker.close()


def _alter(conn: RawConnection, name: str, ops: list[tuple[str, int, str | None]],
           validate_only: bool = False) -> tuple[int, str | None]:
    [result] = conn.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
        {"resource_type": GROUP, "resource_name": name,
         "configs": [{"name": k, "config_operation": op, "value": v} for k, op, v in ops]}],
        "validate_only": validate_only})["responses"]
    return result["error_code"], result["error_message"]


def _replace(conn: RawConnection, name: str, configs: dict[str, str | None]) -> tuple[int, str | None]:
    [result] = conn.request(ALTER_CONFIGS, 2, {"resources": [
        {"resource_type": GROUP, "resource_name": name,
         "configs": [{"name": k, "value": v} for k, v in configs.items()]}], "validate_only": False})["responses"]
    return result["error_code"], result["error_message"]


def _describe(conn: RawConnection, name: str, keys: list[str] | None = None,
              synonyms: bool = True) -> tuple[int, str | None, list[tuple[Any, ...]]]:
    [result] = conn.request(DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": GROUP, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": synonyms, "include_documentation": False})["results"]
    return result["error_code"], result["error_message"], [
        (c["name"], c["value"], c["config_source"], c["config_type"], c["read_only"], c["is_sensitive"],
         [(s["name"], s["value"], s["source"]) for s in c["synonyms"]]) for c in result["configs"]]


def _listed(conn: RawConnection, prefix: str) -> list[str]:
    answer = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": [GROUP]})
    assert answer["error_code"] == 0, answer
    return sorted(r["resource_name"].replace(prefix, "<p>") for r in answer["config_resources"]
                  if r["resource_name"].startswith(prefix))


def _until(what: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
    """``what()`` once ``done`` holds of it: Kafka's broker applies a change a moment after its
    controller acknowledged it, so a read after a write waits for the change to show."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while not done(seen := what()):
        assert time.monotonic() < deadline, seen
        time.sleep(0.05)
    return seen


def _values(described: tuple[int, str | None, list[tuple[Any, ...]]]) -> dict[str, str]:
    return {entry[0]: entry[1] for entry in described[2]}


# Refused changes, each alone on a group that has configs, and Kafka's answer decides.
BAD: dict[str, list[tuple[str, int, str | None]]] = {
    "unknown key": [("nope", SET, "1")],
    "not a number": [("consumer.session.timeout.ms", SET, "abc")],
    "under the key's own bound": [("consumer.session.timeout.ms", SET, "0")],
    "under the broker's minimum": [("consumer.session.timeout.ms", SET, "1000")],
    "over the broker's maximum": [("consumer.session.timeout.ms", SET, "70000")],
    "heartbeat out of range": [("consumer.heartbeat.interval.ms", SET, "20000")],
    "share delivery limit": [("share.delivery.count.limit", SET, "11")],
    "share record locks": [("share.partition.max.record.locks", SET, "50")],
    "share offset reset": [("share.auto.offset.reset", SET, "none")],
    "share isolation level": [("share.isolation.level", SET, "READ")],
    "not a boolean": [("share.renew.acknowledge.enable", SET, "yes")],
    "streams standby replicas": [("streams.num.standby.replicas", SET, "5")],
    "duplicate tags": [("streams.rack.aware.assignment.tags", SET, "a,a")],
    "unknown assignor": [("streams.assignor.name", SET, "nope")],
    "null value": [("consumer.session.timeout.ms", SET, None)],
    "append to a list": [("streams.rack.aware.assignment.tags", APPEND, "c")],
    "subtract from an int": [("consumer.session.timeout.ms", SUBTRACT, "1")],
    "a key twice": [("consumer.session.timeout.ms", SET, "50000"), ("consumer.session.timeout.ms", DELETE, None)],
}


def _raw_steps(port: int) -> dict[str, Any]:
    prefix = unique_topic("group-configs")
    group, other = f"{prefix}-a/b", f"{prefix}-c"  # a group id with a slash, which Kafka takes
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        seen["no configs"] = _describe(conn, f"{prefix}-none")
        seen["empty name"] = _describe(conn, "")
        seen["set"] = _alter(conn, group, [
            ("consumer.session.timeout.ms", SET, "50000"), ("consumer.heartbeat.interval.ms", SET, "6000"),
            ("share.auto.offset.reset", SET, "by_duration:PT1H"), ("streams.rack.aware.assignment.tags", SET, "a,b"),
            ("streams.num.warmup.replicas", SET, "3")])  # an internal key: described only where set
        seen["described"] = _until(lambda: _describe(conn, group),
                                   lambda d: _values(d).get("consumer.session.timeout.ms") == "50000")
        seen["some keys"] = _describe(conn, group, ["consumer.heartbeat.interval.ms", "nope"])
        seen["no synonyms"] = _describe(conn, group, ["consumer.session.timeout.ms"], synonyms=False)
        for label, ops in BAD.items():
            seen[label] = _alter(conn, group, ops)
        seen["validate only, bad"] = _alter(conn, group, [("consumer.session.timeout.ms", SET, "1")], True)
        seen["validate only"] = _alter(conn, other, [("consumer.session.timeout.ms", SET, "55000")], True)
        seen["empty group id"] = _alter(conn, "", [("consumer.session.timeout.ms", SET, "50000")])
        seen["a group twice"] = conn.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
            {"resource_type": GROUP, "resource_name": other,
             "configs": [{"name": "consumer.session.timeout.ms", "config_operation": SET, "value": "50000"}]}] * 2,
            "validate_only": False})["responses"]
        seen["unchanged after refusals"] = _describe(conn, group)
        seen["replaced"] = _replace(conn, other, {"consumer.session.timeout.ms": "55000",
                                                  "share.delivery.count.limit": "4"})
        seen["replaced, unknown key"] = _replace(conn, other, {"nope": "1"})
        seen["replaced, null"] = _replace(conn, other, {"consumer.session.timeout.ms": None})
        seen["described after replacing"] = _until(
            lambda: _describe(conn, other), lambda d: _values(d).get("share.delivery.count.limit") == "4")
        seen["listed"] = _until(lambda: _listed(conn, prefix), lambda names: len(names) == 2)
        seen["delete an unknown key"] = _alter(conn, group, [("nope", DELETE, None)])
        seen["heartbeat deleted"] = _alter(conn, group, [("consumer.heartbeat.interval.ms", DELETE, None)])
        seen["default heartbeat"] = _until(
            lambda: _describe(conn, group), lambda d: _values(d).get("consumer.heartbeat.interval.ms") == "5000")
        seen["all deleted"] = _alter(conn, group, [(k, DELETE, None) for k in (
            "consumer.session.timeout.ms", "share.auto.offset.reset", "streams.rack.aware.assignment.tags",
            "streams.num.warmup.replicas")])
        seen["replaced by none"] = _replace(conn, other, {})
        seen["listed after deleting every key"] = _until(lambda: _listed(conn, prefix), lambda names: not names)
    return _normalised(seen, prefix)


def _normalised(value: Any, prefix: str) -> Any:
    if isinstance(value, str):
        return value.replace(prefix, "<p>")
    if isinstance(value, dict):
        return {k: _normalised(v, prefix) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_normalised(v, prefix) for v in value)
    return value


def test_group_configs_answer_as_kafka(group_broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _raw_steps(group_broker.port)
    assert ours["set"] == (ErrorCode.NONE, None)
    assert ours["unknown key"] == (ErrorCode.INVALID_CONFIG, "Unknown group config name: nope")
    assert ours["listed"] == ["<p>-a/b", "<p>-c"] and ours["listed after deleting every key"] == []
    theirs = _raw_steps(reference_kafka.port)
    differences = {k: (v, theirs[k]) for k, v in ours.items() if v != theirs[k]}
    assert not differences, "\n".join(f"{k}:\n  pykafkad {a}\n  Kafka    {b}" for k, (a, b) in differences.items())


def _tool(broker: BrokerProcess, group: str, *args: str) -> tuple[int, str, str]:
    """The tool's exit code, output and the error it ends on (the last line of its trace)."""
    result = run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--entity-type", "groups",
                                        "--entity-name", group, *args], check=False)
    lines = result.stderr.strip().splitlines()
    return result.returncode, result.stdout.replace(group, "<g>"), lines[-1] if result.returncode and lines else ""


def _tool_steps(broker: BrokerProcess) -> list[tuple[int, str, str]]:
    group = unique_topic("tool-group")
    steps = [
        _tool(broker, group, "--alter", "--add-config",
              "consumer.session.timeout.ms=50000,consumer.heartbeat.interval.ms=6000"),
        _tool(broker, group, "--alter", "--add-config", "nope=1"),
        _tool(broker, group, "--alter", "--add-config", "consumer.session.timeout.ms=1"),
        _tool(broker, group, "--alter", "--delete-config", "consumer.heartbeat.interval.ms"),
    ]
    steps.append(_until(lambda: _tool(broker, group, "--describe"),
                        lambda d: "consumer.heartbeat.interval.ms" not in d[1]))
    steps.append(_tool(broker, group, "--describe", "--all"))
    return steps


def test_kafka_configs_tool_on_groups_as_on_kafka(group_broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _tool_steps(group_broker)
    assert ours[0] == (0, "Completed updating config for group <g>.\n", "")
    assert "consumer.session.timeout.ms=50000 sensitive=false" in ours[4][1]
    assert ours == _tool_steps(reference_kafka)


@pytest.mark.compat_timeout(120)
def test_group_configs_survive_a_restart(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs", name="group-configs-restart").start()
    try:
        with RawConnection(broker.port) as conn:
            assert _alter(conn, "kept", [("consumer.session.timeout.ms", SET, "60000")]) == (0, None)
        broker.restart()
        with RawConnection(broker.port) as conn:
            assert _values(_describe(conn, "kept"))["consumer.session.timeout.ms"] == "60000"
            assert _listed(conn, "kept") == ["<p>"]
    finally:
        broker.close()
