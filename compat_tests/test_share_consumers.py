"""Share groups' fetching (KIP-932) with real share consumers: the Java ``KafkaShareConsumer``
(clients 4.4.0, ``java/ShareMember.java``) and librdkafka's ``ShareConsumer`` (confluent-kafka,
``rdkafka_share_member.py``), unchanged, against a pykafkad broker at ``share.version`` 1.

- Two members of one share group on a one-partition topic each get records, never the same one,
  and together every record exactly once.
- A member killed with SIGKILL while it holds records: its connection drops, its records are
  released at once, and the other member gets them with a delivery count of 2.
- A member that hangs on its records: they come back when the acquisition lock runs out.
- RELEASE makes a record available again, up to the delivery limit, after which it is archived;
  REJECT archives it at once.
- A read_committed group never gets an aborted transaction's records, nor an open one's.
- kafka-share-groups.sh describes a group's offsets and lag, resets them and deletes them.

Every wait is on what a member printed, never on time.
"""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.consumer_protocol_support import Member, wait_until
from compat_tests.java_tools import run_tool, table_row

CLIENTS = ["java", "rdkafka"]
SHARE_MEMBER = (Path(__file__).resolve().parent / "java" / "ShareMember.java", "compat_tests.rdkafka_share_member")
# Short heartbeats and sessions; locks the groups may set as short as a second.
OVERRIDES = {
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.session.timeout.ms": "6000",
    "group.share.min.session.timeout.ms": "6000",
    "group.share.min.record.lock.duration.ms": "1000",
    "auto.create.topics.enable": "false",
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker at share.version 2 (share groups and their dead-letter topics: a new cluster's level),
    with /metrics."""
    broker = BrokerProcess(tmp_path_factory.mktemp("share-consumers") / "logs",
                           {**OVERRIDES, "metrics.listener": f"http://127.0.0.1:{free_port()}"}, name="share")
    broker.start()
    yield broker
    broker.close()


class Deliveries:
    """What share members printed: each delivery as (offset, delivery count, value)."""

    def __init__(self, *members: Member) -> None:
        self.members = members

    @staticmethod
    def of(member: Member) -> list[tuple[int, int, str]]:
        with member.changed:
            lines = [line.split(" ", 5) for line in member.lines if line.startswith("record ")]
        return [(int(offset), int(count), value) for _, _, _, offset, count, value in lines]

    def values(self) -> Counter[str]:
        return Counter(v for m in self.members for _, _, v in self.of(m))


def _group(admin: AdminClient, **configs: str) -> str:
    """A new share group reading from the start of its topics, with these group configs."""
    group = f"share-{uuid.uuid4().hex[:8]}"
    settings = {"share.auto.offset.reset": "earliest", **configs}
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in settings.items()])
    admin.incremental_alter_configs([resource])[resource].result()
    return group


def _topic(admin: AdminClient) -> str:
    topic = f"queue-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    return topic


def _produce(bootstrap: str, topic: str, values: list[str]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for value in values:
        producer.produce(topic, value=value.encode())
    assert producer.flush(30) == 0


@pytest.fixture
def admin(broker: BrokerProcess) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for member in started:
        member.close()


def _start(members: list[Member], client: str, broker: BrokerProcess, group: str, topic: str,
           mode: str) -> Member:
    member = Member(client, broker.bootstrap, group, topic, programs=SHARE_MEMBER, mode=(mode,))
    members.append(member)
    return member


@pytest.mark.parametrize("client", CLIENTS)
def test_two_members_share_a_partition_and_see_every_record_once(
        client: str, broker: BrokerProcess, admin: AdminClient, members: list[Member]) -> None:
    topic, group = _topic(admin), _group(admin)
    first = _start(members, client, broker, group, topic, "ack")
    second = _start(members, client, broker, group, topic, "ack")
    seen = Deliveries(first, second)
    # Records one at a time, each once the one before was delivered, until both members have had
    # some: every fetch of both waits on the partition, and each record goes to one of them.
    produced: list[str] = []
    while not (Deliveries.of(first) and Deliveries.of(second)):
        assert len(produced) < 400, "one member got every record"
        produced.append(f"r{len(produced)}")
        _produce(broker.bootstrap, topic, produced[-1:])
        wait_until(f"{produced[-1]} delivered", lambda: seen.values()[produced[-1]] == 1)
    produced += [f"bulk{i}" for i in range(200)]
    _produce(broker.bootstrap, topic, produced[-200:])
    wait_until("every record delivered", lambda: set(seen.values()) >= set(produced))
    for member in (first, second):
        member.leave()
    counts = seen.values()
    assert set(counts) == set(produced)
    assert [v for v, n in counts.items() if n > 1] == []
    assert all(count == 1 for m in (first, second) for _, count, _ in Deliveries.of(m))


@pytest.mark.parametrize("client", CLIENTS)
def test_a_killed_member_s_records_go_to_another_at_once(
        client: str, broker: BrokerProcess, admin: AdminClient, members: list[Member]) -> None:
    # The longest lock Kafka allows: the records come back because the connection dropped, well
    # before their lock could run out.
    topic, group = _topic(admin), _group(admin, **{"share.record.lock.duration.ms": "60000"})
    holder = _start(members, client, broker, group, topic, "hold")
    _produce(broker.bootstrap, topic, [f"v{i}" for i in range(10)])
    holder.wait_for("holding records", lambda: "holding" in holder.lines)
    held = Deliveries.of(holder)
    assert held and all(count == 1 for _, count, _ in held)
    other = _start(members, client, broker, group, topic, "ack")
    holder.kill9()
    wait_until("the held records delivered again", lambda: {o for o, _, _ in Deliveries.of(other)}
               >= {o for o, _, _ in held}, timeout_s=40)
    again = {o: c for o, c, _ in Deliveries.of(other)}
    assert all(again[o] == 2 for o, _, _ in held)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_hung_member_s_records_come_back_when_the_lock_runs_out(
        client: str, broker: BrokerProcess, admin: AdminClient, members: list[Member]) -> None:
    topic, group = _topic(admin), _group(admin, **{"share.record.lock.duration.ms": "1000"})
    holder = _start(members, client, broker, group, topic, "hold")
    _produce(broker.bootstrap, topic, [f"v{i}" for i in range(5)])
    holder.wait_for("holding records", lambda: "holding" in holder.lines)
    held = {o for o, _, _ in Deliveries.of(holder)}
    other = _start(members, client, broker, group, topic, "ack")
    wait_until("the held records delivered again", lambda: {o for o, _, _ in Deliveries.of(other)} >= held)
    assert {c for o, c, _ in Deliveries.of(other) if o in held} == {2}


@pytest.mark.parametrize("client", CLIENTS)
def test_release_redelivers_up_to_the_limit_and_reject_archives(
        client: str, broker: BrokerProcess, admin: AdminClient, members: list[Member]) -> None:
    topic, group = _topic(admin), _group(admin, **{"share.delivery.count.limit": "3"})
    member = _start(members, client, broker, group, topic, "ack")
    _produce(broker.bootstrap, topic, ["release-me", "reject-me", "fine"])
    seen = Deliveries(member)
    wait_until("the released record's last delivery",
               lambda: seen.values()["release-me"] >= 3 and seen.values()["fine"] >= 1)
    # A record produced after: once it is delivered, nothing before it is still to come.
    _produce(broker.bootstrap, topic, ["last"])
    wait_until("the last record", lambda: seen.values()["last"] == 1)
    member.leave()
    assert seen.values() == Counter({"release-me": 3, "reject-me": 1, "fine": 1, "last": 1})
    assert [c for _, c, v in Deliveries.of(member) if v == "release-me"] == [1, 2, 3]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_read_committed_group_never_sees_aborted_or_open_transactions(
        client: str, broker: BrokerProcess, admin: AdminClient, members: list[Member]) -> None:
    """share.isolation.level=read_committed: records of an aborted transaction are never delivered,
    and those of an open one only once it commits; a read_uncommitted group gets them all."""
    topic = _topic(admin)
    committed = _group(admin, **{"share.isolation.level": "read_committed"})
    uncommitted = _group(admin)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)

    def transaction(values: list[str], commit: bool | None) -> None:
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value=value.encode())
        assert producer.flush(30) == 0
        if commit is True:
            producer.commit_transaction(30)
        elif commit is False:
            producer.abort_transaction(30)

    transaction(["c1", "c2"], commit=True)
    transaction(["a1", "a2"], commit=False)
    transaction(["o1"], commit=None)  # left open
    reader = _start(members, client, broker, committed, topic, "ack")
    everything = _start(members, "rdkafka", broker, uncommitted, topic, "ack")
    wait_until("the read_uncommitted group reads the open transaction",
               lambda: Deliveries(everything).values() == Counter(["c1", "c2", "a1", "a2", "o1"]))
    wait_until("the read_committed group reads the committed records", lambda: Deliveries(reader).values()["c2"])
    assert Deliveries(reader).values() == Counter(["c1", "c2"])
    producer.commit_transaction(30)
    transaction(["c3"], commit=True)
    wait_until("the committed records after it", lambda: Deliveries(reader).values()["c3"])
    reader.leave()
    everything.leave()
    assert Deliveries(reader).values() == Counter(["c1", "c2", "o1", "c3"])


def test_renewed_records_stay_with_their_member_past_the_lock(broker: BrokerProcess, admin: AdminClient,
                                                              members: list[Member]) -> None:
    """RENEW (KIP-1222, the Java client's AcknowledgeType.RENEW over ShareAcknowledge v2): a member that
    renews its records for longer than the lock keeps them, and then accepts them."""
    topic, group = _topic(admin), _group(admin, **{"share.record.lock.duration.ms": "4000"})
    holder = _start(members, "java", broker, group, topic, "renew")
    _produce(broker.bootstrap, topic, [f"v{i}" for i in range(5)])
    holder.wait_for("records held", lambda: any(line.startswith("record ") for line in holder.lines))
    other = _start(members, "rdkafka", broker, group, topic, "ack")
    holder.wait_for("ten renewals and the acceptance",
                    lambda: "committed" in holder.lines or "commit failed" in holder.lines)
    held = Deliveries.of(holder)
    assert holder.lines.count("renewed") == 10 and "committed" in holder.lines, holder.lines
    assert all(count == 1 for _, count, _ in held)
    _produce(broker.bootstrap, topic, ["last"])
    wait_until("a later record delivered", lambda: Deliveries(holder, other).values()["last"] == 1)
    assert not {o for o, _, _ in held} & {o for o, _, _ in Deliveries.of(other)}


def test_record_limit_polls_never_pass_max_poll_records(broker: BrokerProcess, admin: AdminClient,
                                                         members: list[Member]) -> None:
    """share.acquire.mode=record_limit (KIP-1206, ShareFetch v2): a poll brings at most
    max.poll.records records, a batch split where needed, and every record is delivered once."""
    topic, group = _topic(admin), _group(admin)
    values = [f"v{i}" for i in range(10)]
    _produce(broker.bootstrap, topic, values)  # one batch
    member = Member("java", broker.bootstrap, group, topic, programs=SHARE_MEMBER, mode=("ack",),
                    settings={"share.acquire.mode": "record_limit", "max.poll.records": "3"})
    members.append(member)
    wait_until("every record accepted", lambda: _all_committed(member, set(values)))
    member.leave()
    with member.changed:
        lines = list(member.lines)
    polls, count = [], 0
    for line in lines:
        if line.startswith("record "):
            count += 1
        elif line.startswith("commit"):
            polls.append(count)
            count = 0
    assert max(polls) <= 3 and sum(polls) == 10, polls
    assert sorted(Deliveries.of(member)) == [(i, 1, f"v{i}") for i in range(10)]


def _all_committed(member: Member, values: set[str]) -> bool:
    """Whether ``member`` was delivered ``values`` and committed its acknowledgements after the last."""
    with member.changed:
        lines = list(member.lines)
    delivered = {line.split(" ", 5)[5] for line in lines if line.startswith("record ")}
    last_record = max((i for i, line in enumerate(lines) if line.startswith("record ")), default=-1)
    return values <= delivered and "committed" in lines[last_record + 1:]


@pytest.mark.parametrize("client", CLIENTS)
def test_acknowledged_records_survive_kill_9_of_the_broker(client: str, tmp_path: Path,
                                                           members: list[Member]) -> None:
    """The share-partition's state is in __share_group_state: after kill -9 of the broker, a new
    member gets every record not yet acknowledged (those held when the broker died included) and
    none that was."""
    broker = BrokerProcess(tmp_path / "logs", OVERRIDES, name="share-kill").start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        topic, group = _topic(admin), _group(admin)
        accepted = [f"accepted{i}" for i in range(10)]
        _produce(broker.bootstrap, topic, accepted)
        first = _start(members, client, broker, group, topic, "ack")
        wait_until("the first records accepted", lambda: _all_committed(first, set(accepted)))
        first.leave()
        held = [f"held{i}" for i in range(10)]
        _produce(broker.bootstrap, topic, held)
        holder = _start(members, client, broker, group, topic, "hold")
        holder.wait_for("holding records", lambda: "holding" in holder.lines)
        broker.kill9()
        holder.kill9()
        broker.start()
        last = _start(members, client, broker, group, topic, "ack")
        seen = Deliveries(last)
        wait_until("the held records delivered after the restart", lambda: set(held) <= set(seen.values()))
        _produce(broker.bootstrap, topic, ["after"])
        wait_until("the record produced after", lambda: seen.values()["after"] == 1)
        last.leave()
        assert seen.values() == Counter({**dict.fromkeys(held, 1), "after": 1})
        # Kafka's own reader of __share_group_state decodes what was written: the group's last
        # state has every one of the 21 records done.
        states = _share_states(broker, group)
        assert states and states[-1]["startOffset"] == 21, states
    finally:
        broker.close()


def _share_states(broker: BrokerProcess, group: str) -> list[dict[str, Any]]:
    """The values of ``group``'s records in __share_group_state, as Kafka's
    ShareGroupStateMessageFormatter prints them, oldest first."""
    out = run_tool("kafka-console-consumer", [
        "--bootstrap-server", broker.bootstrap, "--topic", "__share_group_state", "--from-beginning",
        "--timeout-ms", "5000", "--formatter",
        "org.apache.kafka.tools.consumer.group.share.ShareGroupStateMessageFormatter"], check=False).stdout
    # The formatter writes its records one after another, with no separator.
    values, decoder, at = [], json.JSONDecoder(), out.find("{")
    while at >= 0:
        record, end = decoder.raw_decode(out, at)
        if record["key"]["data"]["groupId"] == group and record["value"] not in (None, "NULL"):
            values.append(record["value"]["data"])
        at = out.find("{", end)
    return values


def test_a_new_share_group_starts_at_the_end_by_default(broker: BrokerProcess, admin: AdminClient,
                                                         members: list[Member]) -> None:
    """``share.auto.offset.reset`` is ``latest`` unless the group sets it (a trap for a new user, as
    on Kafka): records written before the group first reads a partition are never delivered."""
    topic, group = _topic(admin), f"share-{uuid.uuid4().hex[:8]}"
    _produce(broker.bootstrap, topic, [f"old{i}" for i in range(20)])
    member = _start(members, "rdkafka", broker, group, topic, "ack")
    seen = Deliveries(member)
    # New records until one arrives: the first ones may come before the group first read the partition.
    for attempt in range(60):
        value = f"new{attempt}"
        _produce(broker.bootstrap, topic, [value])
        try:
            wait_until(f"{value} delivered", lambda v=value: seen.values()[v] == 1, timeout_s=2)
            break
        except AssertionError:
            continue
    member.leave()
    assert seen.values() and not [v for v in seen.values() if v.startswith("old")]


def test_a_group_set_by_duration_starts_at_the_records_of_that_period(broker: BrokerProcess, admin: AdminClient,
                                                                       members: list[Member]) -> None:
    """``share.auto.offset.reset=by_duration:PT1H``: a new share-partition starts at the first record
    written in the last hour (by timestamp), not at the start or the end of the log."""
    topic = _topic(admin)
    group = _group(admin, **{"share.auto.offset.reset": "by_duration:PT1H"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    two_hours_ago = int(time.time() * 1000) - 2 * 3600 * 1000
    for i in range(5):
        producer.produce(topic, value=f"old{i}".encode(), timestamp=two_hours_ago + i)
    for i in range(5):
        producer.produce(topic, value=f"new{i}".encode())
    assert producer.flush(30) == 0
    member = _start(members, "rdkafka", broker, group, topic, "ack")
    wait_until("the last hour's records accepted", lambda: _all_committed(member, {f"new{i}" for i in range(5)}))
    member.leave()
    assert sorted(Deliveries.of(member)) == [(5 + i, 1, f"new{i}") for i in range(5)]


def _share_groups_tool(broker: BrokerProcess, *args: str) -> list[dict[str, str]]:
    """A table kafka-share-groups.sh printed, as rows by column name."""
    out = run_tool("kafka-share-groups", ["--bootstrap-server", broker.bootstrap, *args]).stdout
    lines = [line for line in out.splitlines() if line.strip()]
    return [table_row(lines[0], line) for line in lines[1:]]


def test_kafka_share_groups_describes_offsets_and_lag(broker: BrokerProcess, admin: AdminClient,
                                                      members: list[Member]) -> None:
    """kafka-share-groups.sh --describe: each partition's start offset (past what was accepted) and
    its lag (records below the high watermark not yet delivered for good), from
    DescribeShareGroupOffsets; --members and --state from ShareGroupDescribe."""
    topic, group = _topic(admin), _group(admin)
    _produce(broker.bootstrap, topic, [f"v{i}" for i in range(10)])
    member = _start(members, "rdkafka", broker, group, topic, "ack")
    wait_until("every record accepted", lambda: _all_committed(member, {f"v{i}" for i in range(10)}))
    [row] = _share_groups_tool(broker, "--describe", "--group", group, "--members")
    assert (row["GROUP"], row["CLIENT-ID"], row["#PARTITIONS"], row["ASSIGNMENT"]) == (group, "rdkafka", "1",
                                                                                       f"{topic}:0"), row
    member.leave()
    [row] = _share_groups_tool(broker, "--describe", "--group", group)
    assert (row["TOPIC"], row["PARTITION"], row["START-OFFSET"], row["LAG"]) == (topic, "0", "10", "0"), row
    _produce(broker.bootstrap, topic, [f"w{i}" for i in range(5)])
    [row] = _share_groups_tool(broker, "--describe", "--group", group, "--verbose")
    assert (row["START-OFFSET"], row["LAG"]) == ("10", "5"), row
    [row] = _share_groups_tool(broker, "--describe", "--group", group, "--state")
    assert (row["STATE"], row["#MEMBERS"]) == ("Empty", "0"), row
    assert group in run_tool("kafka-share-groups", ["--bootstrap-server", broker.bootstrap, "--list"]).stdout.split()
    deleted = run_tool("kafka-share-groups", ["--bootstrap-server", broker.bootstrap, "--delete", "--group", group])
    assert f"Deletion of requested share groups ('{group}') was successful." in deleted.stdout, deleted.stdout
    assert group not in run_tool("kafka-share-groups", ["--bootstrap-server", broker.bootstrap,
                                                        "--list"]).stdout.split()


def _empty(broker: BrokerProcess, group: str) -> bool:
    [row] = _share_groups_tool(broker, "--describe", "--group", group, "--state")
    return row["STATE"] == "Empty"


def test_kafka_share_groups_resets_and_deletes_offsets(broker: BrokerProcess, admin: AdminClient,
                                                       members: list[Member]) -> None:
    """kafka-share-groups.sh --reset-offsets (refused while the group has members, a dry run that
    changes nothing, then --execute) and --delete-offsets, from AlterShareGroupOffsets and
    DeleteShareGroupOffsets; each proven by what a new member is delivered afterwards."""
    topic, group = _topic(admin), _group(admin)
    values = [f"v{i}" for i in range(10)]
    _produce(broker.bootstrap, topic, values)
    first = _start(members, "rdkafka", broker, group, topic, "ack")
    wait_until("every record accepted", lambda: _all_committed(first, set(values)))
    tool = ["--bootstrap-server", broker.bootstrap, "--group", group]
    refused = run_tool("kafka-share-groups", [*tool, "--reset-offsets", "--to-earliest", "--topic", topic,
                                              "--execute"], check=False)
    assert refused.returncode != 0 and f"Share group '{group}' is not empty." in refused.stdout + refused.stderr
    first.leave()
    wait_until("the group is empty", lambda: _empty(broker, group))
    [row] = _share_groups_tool(broker, "--reset-offsets", "--group", group, "--to-offset", "4", "--topic", topic,
                               "--dry-run")
    assert (row["TOPIC"], row["PARTITION"], row["NEW-OFFSET"]) == (topic, "0", "4"), row
    [row] = _share_groups_tool(broker, "--describe", "--group", group)
    assert row["START-OFFSET"] == "10", row
    [row] = _share_groups_tool(broker, "--reset-offsets", "--group", group, "--to-offset", "4", "--topic", topic,
                               "--execute")
    assert row["NEW-OFFSET"] == "4", row
    [row] = _share_groups_tool(broker, "--describe", "--group", group)
    assert (row["START-OFFSET"], row["LAG"]) == ("4", "6"), row
    second = _start(members, "java", broker, group, topic, "ack")
    wait_until("the records from offset 4 accepted", lambda: _all_committed(second, set(values[4:])))
    second.leave()
    assert sorted(Deliveries.of(second)) == [(i, 1, f"v{i}") for i in range(4, 10)]
    wait_until("the group is empty", lambda: _empty(broker, group))
    deleted = run_tool("kafka-share-groups", [*tool, "--delete-offsets", "--topic", topic]).stdout
    [row] = [table_row(deleted.strip().splitlines()[0], line) for line in deleted.strip().splitlines()[1:]]
    assert (row["TOPIC"], row["STATUS"]) == (topic, "Successful"), deleted
    # With no share state left, a member starts where share.auto.offset.reset says: the earliest.
    third = _start(members, "rdkafka", broker, group, topic, "ack")
    wait_until("every record accepted again", lambda: _all_committed(third, set(values)))
    third.leave()
    assert sorted(Deliveries.of(third)) == [(i, 1, f"v{i}") for i in range(10)]


def _dead_letters(bootstrap: str, topic: str, count: int) -> list[Any]:
    """The first ``count`` records of a dead-letter topic."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    found: list[Any] = []
    try:
        wait_until(f"{count} dead letters", lambda: bool(found.extend(
            m for m in consumer.consume(10, 0.5) if m.error() is None)) or len(found) >= count)
    finally:
        consumer.close()
    return found


def _metric(broker: BrokerProcess, name: str, labels: dict[str, str]) -> float:
    url = broker.overrides["metrics.listener"] + "/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        if line.startswith(f"{name}{{{wanted}}}"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.parametrize("client", CLIENTS)
def test_rejected_and_undeliverable_records_go_to_the_dead_letter_topic(
        client: str, broker: BrokerProcess, admin: AdminClient, members: list[Member]) -> None:
    """With errors.deadletterqueue.topic.name set on the group (share.version 2), a REJECTed record and
    one released until the delivery limit are written to that topic, with the original key, value and
    headers (errors.deadletterqueue.copy.record.enable) and Kafka's __dlq.errors.* headers, once each,
    before they are archived; the topic is made for it, and the broker counts them."""
    topic, dlq = _topic(admin), f"dlq-{uuid.uuid4().hex[:8]}"
    group = _group(admin, **{"share.delivery.count.limit": "2", "errors.deadletterqueue.topic.name": dlq,
                             "errors.deadletterqueue.copy.record.enable": "true"})
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in ("release-me", "reject-me", "fine"):
        producer.produce(topic, key=f"key-{value}".encode(), value=value.encode(), headers=[("origin", b"test")])
    assert producer.flush(30) == 0
    member = _start(members, client, broker, group, topic, "ack")
    seen = Deliveries(member)
    wait_until("the released record's last delivery", lambda: seen.values()["release-me"] == 2)
    letters = sorted(_dead_letters(broker.bootstrap, dlq, 2), key=lambda m: m.value())
    assert [(m.key(), m.value()) for m in letters] == [(b"key-reject-me", b"reject-me"),
                                                       (b"key-release-me", b"release-me")]
    headers = [dict(m.headers()) for m in letters]
    assert [h["origin"] for h in headers] == [b"test", b"test"]
    assert [(h["__dlq.errors.topic"], h["__dlq.errors.partition"], h["__dlq.errors.offset"], h["__dlq.errors.group"],
             h["__dlq.errors.delivery.count"]) for h in headers] == [
        (topic.encode(), b"0", b"1", group.encode(), b"1"), (topic.encode(), b"0", b"0", group.encode(), b"2")]
    assert headers[1]["__dlq.errors.message"] == b"Offset delivery count exceeded the threshold."
    _produce(broker.bootstrap, topic, ["last"])
    wait_until("the last record", lambda: seen.values()["last"] == 1)
    member.leave()
    assert seen.values() == Counter({"release-me": 2, "reject-me": 1, "fine": 1, "last": 1})
    described = admin.describe_configs([ConfigResource(ResourceType.TOPIC, dlq)])
    configs = next(iter(described.values())).result()
    assert configs["errors.deadletterqueue.group.enable"].value == "true"
    assert _metric(broker, "kafka_server_sharegroupmetrics_deadletteredrecords_total",
                   {"group": group, "topic": topic}) == 2
    assert len(_dead_letters(broker.bootstrap, dlq, 2)) == 2


def test_a_refused_dead_letter_stays_in_flight_until_it_is_written(broker: BrokerProcess, admin: AdminClient,
                                                                  members: list[Member]) -> None:
    """A dead-letter topic that exists without errors.deadletterqueue.group.enable=true is refused, as
    Kafka refuses it: the rejected record is not archived (the group's start offset stays before it)
    until the topic allows it, and then it is written once."""
    topic, dlq = _topic(admin), _topic(admin)
    group = _group(admin, **{"errors.deadletterqueue.topic.name": dlq})
    _produce(broker.bootstrap, topic, ["reject-me", "fine"])
    member = _start(members, "rdkafka", broker, group, topic, "ack")
    wait_until("both acknowledged", lambda: _all_committed(member, {"reject-me", "fine"}))
    member.leave()
    [row] = _share_groups_tool(broker, "--describe", "--group", group)
    assert row["START-OFFSET"] == "0", row
    resource = ConfigResource(ResourceType.TOPIC, dlq, incremental_configs=[
        ConfigEntry("errors.deadletterqueue.group.enable", "true", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result()
    [letter] = _dead_letters(broker.bootstrap, dlq, 1)
    assert (letter.key(), letter.value()) == (None, None)  # headers only, Kafka's default
    assert dict(letter.headers())["__dlq.errors.offset"] == b"0"
    wait_until("the rejected record archived", lambda: _share_groups_tool(
        broker, "--describe", "--group", group)[0]["START-OFFSET"] == "2")
