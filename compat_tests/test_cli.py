"""The ``pykafkad`` commands for people (cluster, topic, group, produce, consume) against pykafkad and
against Apache Kafka: they speak the Kafka protocol, so each must work on both with the same
results; tables for people, ``--json`` for scripts, one line with the Kafka error and what to do
when something fails."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from compat_tests.broker_process import REFERENCE_KAFKA_MODULE, BrokerProcess, free_port
from compat_tests.consumer_protocol_support import Member
from compat_tests.java_tools import run_tool
from compat_tests.test_share_consumers import SHARE_MEMBER


@pytest.fixture(scope="module", params=["pykafkad", "kafka"])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    module = REFERENCE_KAFKA_MODULE if request.param == "kafka" else None
    process = BrokerProcess(tmp_path_factory.mktemp(request.param) / "logs",
                            {"group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "1",
                             "share.coordinator.state.topic.replication.factor": "1",
                             "share.coordinator.state.topic.min.isr": "1"},
                            name=f"cli-{request.param}", module=module)
    process.start(timeout=120)
    yield process
    process.close()


def run(broker: BrokerProcess, *args: str, stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pykafkad", *args, "-b", broker.bootstrap], input=stdin,
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent.parent)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def run_json(broker: BrokerProcess, *args: str, stdin: str | None = None) -> Any:
    return json.loads(run(broker, *args, "--json", stdin=stdin).stdout)


def test_topics_from_creation_to_deletion(broker: BrokerProcess) -> None:
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    created = run(broker, "topic", "create", topic, "-p", "2", "-r", "1", "-c", "retention.ms=3600000")
    assert topic in created.stdout and "created" in created.stdout
    again = run(broker, "topic", "create", topic, ok=False)
    assert again.returncode == 1
    assert again.stderr.startswith(f"pykafkad: create topic {topic}: TOPIC_ALREADY_EXISTS")
    assert "pykafkad topic describe" in again.stderr and "Traceback" not in again.stderr
    assert {"name": topic, "partitions": 2, "replicas": 1} in run_json(broker, "topic", "list")
    produced = run_json(broker, "produce", topic, "-k", ":", stdin="k1:one\nk1:two\nk2:three\n")
    assert len(produced["records"]) == 3
    described = run_json(broker, "topic", "describe", topic)
    assert sum(p["high_watermark"] for p in described["partitions"]) == 3
    assert described["configs"] == {"retention.ms": "3600000"}
    assert "HIGH-WATERMARK" in run(broker, "topic", "describe", topic).stdout
    run(broker, "topic", "alter-config", topic, "--set", "retention.ms=1000", "--set", "cleanup.policy=compact")
    assert run_json(broker, "topic", "describe", topic)["configs"] == {"retention.ms": "1000",
                                                                       "cleanup.policy": "compact"}
    run(broker, "topic", "alter-config", topic, "--delete", "cleanup.policy")
    assert run_json(broker, "topic", "describe", topic)["configs"] == {"retention.ms": "1000"}
    assert run_json(broker, "topic", "add-partitions", topic, "-n", "1")["partitions"] == 3
    records = run_json(broker, "consume", topic, "-n", "3", "--timeout", "20")
    assert sorted(r["value"] for r in records) == ["one", "three", "two"]
    assert {r["key"] for r in records} == {"k1", "k2"}
    run(broker, "topic", "delete", topic)
    assert topic not in [t["name"] for t in run_json(broker, "topic", "list")]
    missing = run(broker, "topic", "describe", topic, ok=False)
    assert missing.returncode == 1 and "pykafkad topic list" in missing.stderr


def test_groups_lag_and_reset(broker: BrokerProcess) -> None:
    topic, group = f"cli-g-{uuid.uuid4().hex[:8]}", f"cli-{uuid.uuid4().hex[:8]}"
    run(broker, "topic", "create", topic, "-p", "1", "-r", "1")
    run(broker, "produce", topic, stdin="".join(f"v{n}\n" for n in range(10)))
    consumed = run(broker, "consume", topic, "-g", group, "-n", "10", "--timeout", "20")
    assert consumed.stdout.split() == [f"v{n}" for n in range(10)]
    assert group in [g["group"] for g in run_json(broker, "group", "list")]
    assert run_json(broker, "group", "describe", group)["state"] == "EMPTY"
    lag = run_json(broker, "group", "lag", group)
    assert lag["total_lag"] == 0 and lag["partitions"][0]["committed"] == 10
    planned = run_json(broker, "group", "reset-offsets", group, "--topic", topic, "--to-offset", "4")
    assert planned["executed"] is False and run_json(broker, "group", "lag", group)["total_lag"] == 0
    run(broker, "group", "reset-offsets", group, "--topic", topic, "--to-offset", "4", "--execute")
    assert run_json(broker, "group", "lag", group)["total_lag"] == 6
    run(broker, "group", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
    assert run_json(broker, "group", "lag", group)["total_lag"] == 10
    run(broker, "group", "delete", group)
    assert group not in [g["group"] for g in run_json(broker, "group", "list")]


def test_consumer_protocol_group_described_and_reset(broker: BrokerProcess) -> None:
    """A KIP-848 group: `group describe` shows its type and each member's target assignment; once its
    member left, `group reset-offsets` and Kafka's `kafka-consumer-groups --reset-offsets` move its
    offsets like a classic group's."""
    topic, group = f"cli-848-{uuid.uuid4().hex[:8]}", f"cli-848-{uuid.uuid4().hex[:8]}"
    run(broker, "topic", "create", topic, "-p", "2", "-r", "1")
    run(broker, "produce", topic, stdin="".join(f"v{n}\n" for n in range(10)))
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "group.protocol": "consumer",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        got = 0
        deadline = time.monotonic() + 30
        while got < 10 and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            got += msg is not None and msg.error() is None
        assert got == 10
        consumer.commit(asynchronous=False)
        described = run_json(broker, "group", "describe", group)
        assert (described["type"], described["state"], described["protocol"]) == ("consumer", "STABLE", "uniform")
        [member] = described["members"]
        assert member["assignment"] == member["target_assignment"] == [[topic, 0], [topic, 1]]
        assert "TARGET" in run(broker, "group", "describe", group).stdout
    finally:
        consumer.close()
    assert run_json(broker, "group", "lag", group)["total_lag"] == 0
    run(broker, "group", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
    assert run_json(broker, "group", "lag", group)["total_lag"] == 10
    run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--group", group, "--reset-offsets",
                                       "--topic", topic, "--to-latest", "--execute"])
    assert run_json(broker, "group", "lag", group)["total_lag"] == 0


def test_share_group_described_lagged_reset_and_deleted(broker: BrokerProcess) -> None:
    """A share group (KIP-932; on in a new cluster of either): `group list` names its type, `group
    describe` its members, `group lag` its start offsets and lag; `group reset-offsets` moves them once
    its consumers are gone, and says what to do while they are not."""
    topic, group = f"cli-share-{uuid.uuid4().hex[:8]}", f"cli-share-{uuid.uuid4().hex[:8]}"
    run(broker, "topic", "create", topic, "-p", "1", "-r", "1")
    run(broker, "produce", topic, stdin="".join(f"v{n}\n" for n in range(10)))
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result()
    member = Member("rdkafka", broker.bootstrap, group, topic, programs=SHARE_MEMBER, mode=("ack",))
    try:
        member.wait_for("every record accepted", lambda: sum(line.startswith("record ") for line in member.lines)
                        == 10 and member.lines[-1] == "committed")
        assert {"group": group, "type": "share", "state": "STABLE"} in run_json(broker, "group", "list")
        described = run_json(broker, "group", "describe", group)
        assert (described["type"], described["state"]) == ("share", "STABLE")
        assert [m["assignment"] for m in described["members"]] == [[[topic, 0]]]
        busy = run(broker, "group", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute", ok=False)
        assert busy.returncode == 1 and "NON_EMPTY_GROUP: stop its consumers first" in busy.stderr, busy.stderr
        member.leave()
    finally:
        member.close()
    deadline = time.monotonic() + 60
    while run_json(broker, "group", "describe", group)["state"] != "EMPTY":
        assert time.monotonic() < deadline, "the share group did not empty"
        time.sleep(0.2)
    assert run_json(broker, "group", "lag", group)["total_lag"] == 0
    run(broker, "group", "reset-offsets", group, "--topic", topic, "--to-offset", "4", "--execute")
    lag = run_json(broker, "group", "lag", group)
    assert lag["total_lag"] == 6 and lag["partitions"][0]["start_offset"] == 4, lag
    assert "START-OFFSET" in run(broker, "group", "lag", group).stdout
    run(broker, "group", "delete", group)
    assert group not in [g["group"] for g in run_json(broker, "group", "list")]


def test_cluster_info_and_health(broker: BrokerProcess) -> None:
    info = run_json(broker, "cluster", "info")
    assert [b["port"] for b in info["brokers"]] == [broker.port] and info["brokers"][0]["controller"]
    assert run_json(broker, "cluster", "health") == {"healthy": True, "problems": []}
    assert "BROKERS" in run(broker, "cluster", "info").stdout


def test_reassign_speaks_the_same_protocol_to_both(broker: BrokerProcess, tmp_path: Path) -> None:
    # One broker cannot move a replica anywhere, but every request of `pykafkad reassign` (ApiVersions,
    # Metadata, List/AlterPartitionReassignments, DescribeLogDirs, IncrementalAlterConfigs) is answered
    # alike: a move onto the replica it has completes at once, and its throttle is set then cleared.
    topic = f"cli-r-{uuid.uuid4().hex[:8]}"
    run(broker, "topic", "create", topic, "-p", "1", "-r", "1")
    node = run_json(broker, "cluster", "info")["brokers"][0]["id"]
    assert run_json(broker, "reassign", "status") == {"reassignments": []}
    assert "0 reassignment(s) in progress" in run(broker, "reassign", "status").stdout
    done = run(broker, "reassign", "start", "--topic", topic, "--partition", "0", "--replicas", str(node),
               "--throttle", "1000000", "--wait")
    assert f"replication throttled to 1000000 B/s on brokers {node}" in done.stdout, done.stdout
    assert f"started reassigning {topic}-0" in done.stdout and "1 partition(s) moved" in done.stdout, done.stdout
    assert "replication throttles cleared" in done.stdout, done.stdout
    assert done.stderr.strip().endswith("1 of 1 partition(s) moved"), done.stderr
    assert run_json(broker, "topic", "describe", topic)["configs"] == {}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [node],
                                                              "log_dirs": ["any"]}]}))
    assert run_json(broker, "reassign", "start", "--reassignment-json-file", str(plan), "--wait")["moved"] == [
        {"topic": topic, "partition": 0}]
    plan.write_text('{"version": 1, "partitions": [{"topic": "t"}]}')
    garbled = run(broker, "reassign", "start", "--reassignment-json-file", str(plan), ok=False)
    assert garbled.stderr.startswith(f"pykafkad: --reassignment-json-file {plan}: not Kafka's reassignment JSON")

    bad = run(broker, "reassign", "start", "--topic", topic, "--partition", "0", "--replicas", f"{node},{node + 100}",
              ok=False)
    assert bad.returncode == 1 and "INVALID_REPLICA_ASSIGNMENT" in bad.stdout, bad.stdout + bad.stderr
    assert "pykafkad cluster info" in bad.stdout and "Traceback" not in bad.stderr
    missing = run(broker, "reassign", "start", "--topic", f"{topic}-no", "--partition", "0", "--replicas", str(node),
                  ok=False)
    assert "UNKNOWN_TOPIC_OR_PARTITION" in missing.stdout, missing.stdout + missing.stderr
    nothing = run(broker, "reassign", "cancel", "--topic", topic, "--partition", "0", ok=False)
    assert "NO_REASSIGNMENT_IN_PROGRESS" in nothing.stdout, nothing.stdout + nothing.stderr
    assert "nothing to cancel" in run(broker, "reassign", "cancel", "--all").stdout
    usage = run(broker, "reassign", "start", "--topic", topic, ok=False)
    assert usage.stderr == "pykafkad: give --topic, --partition and --replicas (or --reassignment-json-file)\n"


def test_an_unreachable_broker_is_one_line() -> None:
    # The commands on librdkafka and those on pykafkad's own protocol client say it the same way,
    # at once rather than after librdkafka's retries run out.
    for command in (["topic", "list"], ["produce", "t"], ["consume", "t"], ["reassign", "status"]):
        port = free_port()
        done = subprocess.run([sys.executable, "-m", "pykafkad", *command, "-b", f"127.0.0.1:{port}"],
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr == (f"pykafkad: cannot reach 127.0.0.1:{port} (Connection refused); is a broker running "
                               "there? set --bootstrap-server or PYKAFKAD_BROKERS\n"), (command, done.stderr)


def test_a_group_that_never_forms_is_one_line(tmp_path: Path) -> None:
    # A broker started without configs/server.properties keeps Kafka's offsets.topic.replication.factor=3:
    # on one broker no group can form.  `consume -g` says so instead of printing nothing and exiting 0.
    broker = BrokerProcess(tmp_path / "logs", {"offsets.topic.replication.factor": "3"}, name="cli-no-group")
    broker.start()
    try:
        topic = f"cli-ng-{uuid.uuid4().hex[:8]}"
        run(broker, "topic", "create", topic, "-p", "1", "-r", "1")
        run(broker, "produce", topic, stdin="v\n")
        done = run(broker, "consume", topic, "-g", "g", "--timeout", "3", ok=False)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith(f"pykafkad: consume {topic}: group g was given no partitions in 3 s"), done.stderr
        assert "offsets.topic.replication.factor=1" in done.stderr, done.stderr
        # The broker says why, as docs/troubleshooting.md shows it.
        assert "cannot create __consumer_offsets yet: INVALID_REPLICATION_FACTOR" in broker.stderr_tail(200)
        # Without a group it reads the record.
        assert run(broker, "consume", topic, "--timeout", "3").stdout.split() == ["v"]
    finally:
        broker.close()
