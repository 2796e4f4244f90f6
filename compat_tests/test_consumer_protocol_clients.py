"""Consumer groups on the KIP-848 protocol (``group.protocol=consumer``) with real clients: Kafka's Java
consumer 4.4.0 and librdkafka (confluent-kafka), unchanged.

Members share a topic's partitions and the group rebalances as they join, leave and crash: one
member takes every partition; a second joining gets half of them, the first giving them up
first; a member leaving hands its partitions back; a member killed with SIGKILL loses them when its
session times out.  Every record produced is consumed, and a record is consumed twice only if the
killed member consumed it after its last commit.  Kafka's own kafka-consumer-groups.sh then lists the
group as a consumer-protocol group and describes its members with their epochs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.consumer_protocol_support import CONSUMER_PROTOCOL_OVERRIDES, Member, wait_until
from compat_tests.groups_support import produce_spread
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

PARTITIONS = 6
BATCH = 60


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for m in started:
        m.close()


def _all(topic: str) -> set[str]:
    return {f"{topic}-{p}" for p in range(PARTITIONS)}


def _split_between(a: Member, b: Member, topic: str) -> bool:
    mine, theirs = a.owned(), b.owned()
    return bool(mine) and bool(theirs) and not mine & theirs and mine | theirs == _all(topic) \
        and abs(len(mine) - len(theirs)) <= 1


def _share_and_rebalance(broker: BrokerProcess, client: str, members: list[Member]) -> str:
    topic, group = unique_topic(f"kip848-{client}"), unique_topic(f"g848-{client}")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produced: list[str] = []

    def produce(tag: str) -> None:
        produce_spread(broker.bootstrap, topic, BATCH, PARTITIONS, tag)
        produced.extend(f"{tag}-{i}" for i in range(BATCH))

    def start() -> Member:
        m = Member(client, broker.bootstrap, group, f"topic:{topic}")
        members.append(m)
        return m

    produce("one")
    a = start()
    a.wait_for("owning every partition", lambda: a.owned() == _all(topic))
    b = start()
    wait_until("a and b sharing the partitions", lambda: _split_between(a, b, topic))
    produce("two")
    seen = lambda: set(a.values()) | set(b.values())  # noqa: E731
    wait_until("every record of batches one and two consumed", lambda: set(produced) <= seen())

    b.leave()
    a.wait_for("taking b's partitions back", lambda: a.owned() == _all(topic))
    c = start()
    wait_until("a and c sharing the partitions", lambda: _split_between(a, c, topic))
    produce("three")
    c.wait_for("consuming", lambda: any(v.startswith("three-") for v in c.values()))
    c.kill9()
    # c's session times out (6 s): its partitions come back to a.
    a.wait_for("taking the crashed member's partitions", lambda: a.owned() == _all(topic))
    produce("four")
    everything = lambda: set(a.values()) | set(b.values()) | set(c.values())  # noqa: E731
    wait_until("every record consumed", lambda: set(produced) <= everything())

    counts = Counter(a.values() + b.values() + c.values())
    twice = {v for v, n in counts.items() if n > 1}
    uncommitted = set(c.values()) - c.committed_values()
    where = {v: [(name, m.lines.index(next(x for x in m.lines if x.endswith(" " + v))))
                 for name, m in (("a", a), ("b", b), ("c", c)) if v in m.values()] for v in twice - uncommitted}
    assert twice <= uncommitted, f"consumed twice though committed: {where}\nc said {c.lines[-30:]}"
    return group


@pytest.mark.compat_timeout(240)
def test_java_consumers_share_and_rebalance(broker_factory: BrokerFactory, members: list[Member]) -> None:
    broker = broker_factory("kip848-java", CONSUMER_PROTOCOL_OVERRIDES)
    group = _share_and_rebalance(broker, "java", members)

    listed = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--list", "--type"]).stdout
    assert any(line.split()[:2] == [group, "Consumer"] for line in listed.splitlines()), listed
    described = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--describe",
                                                   "--group", group, "--members", "--verbose"]).stdout
    rows = [line.split() for line in described.splitlines() if line.startswith(group)]
    # One member left (a): its current epoch equals its target epoch, with all six partitions.
    assert len(rows) == 1, described
    assert rows[0][4] == str(PARTITIONS) and rows[0][5] == rows[0][7], described


@pytest.mark.compat_timeout(240)
def test_librdkafka_consumers_share_and_rebalance(broker_factory: BrokerFactory, members: list[Member]) -> None:
    broker = broker_factory("kip848-rdkafka", CONSUMER_PROTOCOL_OVERRIDES)
    _share_and_rebalance(broker, "rdkafka", members)


def _regex_picks_up_new_topic(broker: BrokerProcess, client: str, members: list[Member]) -> None:
    prefix = unique_topic(f"re848{client}")
    first = f"{prefix}-first"
    create_topic(broker.bootstrap, first, 2)
    produce_spread(broker.bootstrap, first, 10, 2, "first")
    m = Member(client, broker.bootstrap, unique_topic(f"gre-{client}"), f"pattern:{prefix}-.*")
    members.append(m)
    m.wait_for("owning the first topic", lambda: m.owned() == {f"{first}-0", f"{first}-1"})
    later = f"{prefix}-later"
    create_topic(broker.bootstrap, later, 2)
    produce_spread(broker.bootstrap, later, 10, 2, "later")
    m.wait_for("owning the topic created later",
               lambda: m.owned() == {f"{first}-0", f"{first}-1", f"{later}-0", f"{later}-1"})
    expected = {f"first-{i}" for i in range(10)} | {f"later-{i}" for i in range(10)}
    m.wait_for("consuming both topics", lambda: expected <= set(m.values()))


@pytest.mark.compat_timeout(120)
@pytest.mark.parametrize("client", ["java", "rdkafka"])
def test_regex_subscription_picks_up_a_topic_created_later(broker_factory: BrokerFactory, members: list[Member],
                                                           client: str) -> None:
    broker = broker_factory(f"kip848-regex-{client}", CONSUMER_PROTOCOL_OVERRIDES)
    _regex_picks_up_new_topic(broker, client, members)


def _join(conn: RawConnection, group: str, member: str) -> dict[str, Any]:
    return conn.request(68, 1, {"group_id": group, "member_id": member, "member_epoch": 0, "instance_id": None,
                                "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
                                "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []})


def _classic_join(conn: RawConnection, group: str) -> int:
    return conn.request(11, 9, {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                "protocols": [{"name": "range", "metadata": b""}], "reason": None})["error_code"]


def test_consumer_protocol_switches_and_bounds(broker_factory: BrokerFactory) -> None:
    """Without ``consumer`` in group.coordinator.rebalance.protocols, or with group.version 0, the
    KIP-848 heartbeat is refused;
    ``group.consumer.max.size`` refuses one member too many, of either protocol; an empty group
    changes protocol when a member of the other one joins."""
    classic_only = broker_factory("kip848-off", {"group.coordinator.rebalance.protocols": "classic"})
    with RawConnection(classic_only.port) as conn:
        # Advertised all the same, as Kafka 4.4 does (checked against it), and refused.
        _, versions = conn.api_versions()
        assert 68 in versions and 69 in versions
        assert _join(conn, "g", "m1")["error_code"] == ErrorCode.UNSUPPORTED_VERSION

    # group.version gates them too, as in Kafka 4.4 (checked against it): a new cluster has it at 1.
    gated = broker_factory("kip848-feature")
    with RawConnection(gated.port) as conn:
        conn.create_topic("t")
        assert _join(conn, "gv", "m1")["error_code"] in (ErrorCode.NONE, 14, 15, 16)
    disabled = run_tool("kafka-features", ["--bootstrap-server", gated.bootstrap, "disable", "--feature",
                                           "group.version"])
    assert "group.version was disabled." in disabled.stdout, disabled.stdout
    with RawConnection(gated.port) as conn:
        assert _join(conn, "gv", "m1")["error_code"] == ErrorCode.UNSUPPORTED_VERSION
        described = conn.request(69, 1, {"group_ids": ["gv"], "include_authorized_operations": False})
        assert described["groups"][0]["error_code"] == ErrorCode.UNSUPPORTED_VERSION

    broker = broker_factory("kip848-bounds", {**CONSUMER_PROTOCOL_OVERRIDES, "group.consumer.max.size": "1"})
    with RawConnection(broker.port) as conn:
        conn.create_topic("t")
        group = unique_topic("g848-switch")
        deadline = time.monotonic() + 60
        while (first := _join(conn, group, "m1"))["error_code"] in (14, 15, 16):
            assert time.monotonic() < deadline, first
            time.sleep(0.1)
        assert first["error_code"] == ErrorCode.NONE
        full = _join(conn, group, "m2")
        assert (full["error_code"], full["error_message"]) == (
            ErrorCode.GROUP_MAX_SIZE_REACHED, "The consumer group has reached its maximum capacity of 1 members.")
        # A classic member joining counts against the same bound (KIP-848's mixed groups); once the
        # member left, the group is empty and turns classic.
        assert _classic_join(conn, group) == ErrorCode.GROUP_MAX_SIZE_REACHED
        left = conn.request(68, 1, {**{k: None for k in ("instance_id", "rack_id", "subscribed_topic_names",
                                                          "subscribed_topic_regex", "server_assignor",
                                                          "topic_partitions")},
                                    "group_id": group, "member_id": "m1", "member_epoch": -1,
                                    "rebalance_timeout_ms": -1})
        assert left["error_code"] == ErrorCode.NONE
        assert _classic_join(conn, group) == ErrorCode.MEMBER_ID_REQUIRED
        listed = conn.request(16, 5, {"states_filter": [], "types_filter": []})["groups"]
        assert [g["group_type"] for g in listed if g["group_id"] == group] == ["classic"]
