"""A consumer group rolls between the classic protocol and the consumer protocol of KIP-848 while it
keeps consuming: Kafka's Java consumers 4.4.0, and librdkafka, unchanged, some with
``group.protocol=classic`` and some with ``group.protocol=consumer``, in one group.

Two classic members share a topic; a consumer-protocol member joins, and the group turns into a
consumer group online (its classic members keep their partitions and their commits count) and
gives the newcomer its share; a classic member is replaced by another consumer-protocol one; then a
classic member joins the mixed group, the consumer-protocol members leave, and as the last one goes
the group turns back into a classic group whose members share every partition.  Through all of it,
every record produced is consumed and none twice (every member commits what it consumed before it
gives a partition up), and ConsumerGroupDescribe, ListGroups and kafka-consumer-groups.sh (its
UPGRADED column) show which protocol each member and the group speak.  With
``group.consumer.migration.policy=downgrade`` a consumer-protocol member cannot join a classic group
with members, as Kafka refuses it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.consumer_protocol_support import CONSUMER_PROTOCOL_OVERRIDES, Member, wait_until
from compat_tests.groups_support import produce_spread
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

PARTITIONS = 6
BATCH = 60
# Classic members: short sessions and heartbeats, so that they hear of a rebalance quickly.
CLASSIC = {"group.protocol": "classic", "session.timeout.ms": "10000", "heartbeat.interval.ms": "500"}
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for m in started:
        m.close()


def _shared(topic: str, *group: Member) -> bool:
    """Every partition owned by exactly one of ``group``, each owning some (at most one apart)."""
    owned = [m.owned() for m in group]
    everything = {f"{topic}-{p}" for p in range(PARTITIONS)}
    return (all(owned) and sum(len(o) for o in owned) == PARTITIONS and set().union(*owned) == everything
            and max(len(o) for o in owned) - min(len(o) for o in owned) <= 1)


def _describe(broker: BrokerProcess, group: str) -> dict:
    with RawConnection(broker.port) as conn:
        return conn.request(69, 1, {"group_ids": [group], "include_authorized_operations": False})["groups"][0]


def _group_type(broker: BrokerProcess, group: str) -> str:
    with RawConnection(broker.port) as conn:
        listed = conn.request(16, 5, {"states_filter": [], "types_filter": []})["groups"]
    return next(g["group_type"] for g in listed if g["group_id"] == group)


def _member_types(broker: BrokerProcess, group: str) -> list[int]:
    return sorted(m["member_type"] for m in _describe(broker, group)["members"])


@pytest.mark.compat_timeout(300)
@pytest.mark.parametrize("client", ["java", "rdkafka"])
def test_a_group_rolls_from_classic_to_consumer_and_back(broker_factory: BrokerFactory, members: list[Member],
                                                         client: str) -> None:
    broker = broker_factory(f"kip848-migration-{client}", CONSUMER_PROTOCOL_OVERRIDES)
    topic, group = unique_topic(f"migrate-{client}"), unique_topic(f"g-migrate-{client}")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produced: list[str] = []

    def produce(tag: str) -> None:
        produce_spread(broker.bootstrap, topic, BATCH, PARTITIONS, tag)
        produced.extend(f"{tag}-{i}" for i in range(BATCH))

    def start(protocol: str) -> Member:
        m = Member(client, broker.bootstrap, group, f"topic:{topic}", CLASSIC if protocol == "classic" else None)
        members.append(m)
        return m

    def consumed() -> list[str]:
        return [v for m in members for v in m.values()]

    def all_consumed(what: str) -> None:
        wait_until(what, lambda: set(produced) <= set(consumed()))

    # A classic group.
    produce("one")
    c1, c2 = start("classic"), start("classic")
    wait_until("two classic members sharing the topic", lambda: _shared(topic, c1, c2))
    all_consumed("batch one consumed by the classic group")
    assert _group_type(broker, group) == "classic"

    # A consumer-protocol member joins: the group upgrades and gives it its share.
    n1 = start("consumer")
    wait_until("two classic members and a consumer-protocol one sharing the topic",
               lambda: _shared(topic, c1, c2, n1))
    assert _group_type(broker, group) == "consumer"
    assert _member_types(broker, group) == [CLASSIC_MEMBER, CLASSIC_MEMBER, CONSUMER_MEMBER]
    produce("two")
    all_consumed("batch two consumed by the mixed group")

    # A rolling upgrade: a classic member goes, another consumer-protocol member comes.
    c1.leave()
    n2 = start("consumer")
    wait_until("one classic and two consumer-protocol members sharing the topic",
               lambda: _shared(topic, c2, n1, n2))
    # The members' callbacks can show the new split a heartbeat before the coordinator has every
    # member at the new epoch (a classic member confirms it with its next JoinGroup/SyncGroup).
    wait_until("the group stable", lambda: _describe(broker, group)["group_state"] == "Stable")
    assert _member_types(broker, group) == [CLASSIC_MEMBER, CONSUMER_MEMBER, CONSUMER_MEMBER]
    # Kafka's tool shows which members moved to the consumer protocol (its UPGRADED column).
    described_by_tool = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--describe",
                                                           "--group", group, "--members", "--verbose"]).stdout
    rows = [line.split() for line in described_by_tool.splitlines() if line.startswith(group)]
    assert sorted(row[-1] for row in rows) == ["false", "true", "true"], described_by_tool
    produce("three")
    all_consumed("batch three consumed")

    # And back: a classic member joins the mixed group, the consumer-protocol members leave, and the
    # last one leaving turns the group classic again.
    c3 = start("classic")
    wait_until("four members of both protocols sharing the topic", lambda: _shared(topic, c2, c3, n1, n2))
    n1.leave()
    wait_until("three members sharing the topic", lambda: _shared(topic, c2, c3, n2))
    n2.leave()
    wait_until("the group classic again", lambda: _group_type(broker, group) == "classic")
    wait_until("the classic members sharing the topic", lambda: _shared(topic, c2, c3))
    produce("four")
    all_consumed("batch four consumed by the classic group")

    listed = run_tool("kafka-consumer-groups", ["--bootstrap-server", broker.bootstrap, "--list", "--type"]).stdout
    assert any(line.split()[:2] == [group, "Classic"] for line in listed.splitlines()), listed
    twice = {v: n for v, n in Counter(consumed()).items() if n > 1}
    assert not twice, f"consumed more than once: {sorted(twice)[:20]}"


def test_the_migration_policy_can_refuse_the_upgrade(broker_factory: BrokerFactory, members: list[Member]) -> None:
    broker = broker_factory("kip848-no-migration", {**CONSUMER_PROTOCOL_OVERRIDES,
                                                    "group.consumer.migration.policy": "downgrade"})
    topic, group = unique_topic("nomigrate"), unique_topic("g-nomigrate")
    create_topic(broker.bootstrap, topic, 2)
    classic = Member("java", broker.bootstrap, group, f"topic:{topic}", CLASSIC)
    members.append(classic)
    classic.wait_for("owning both partitions", lambda: len(classic.owned()) == 2)
    with RawConnection(broker.port) as conn:
        answer = conn.request(68, 1, {"group_id": group, "member_id": "m-new", "member_epoch": 0, "instance_id": None,
                                      "rack_id": None, "rebalance_timeout_ms": 30000,
                                      "subscribed_topic_names": [topic], "subscribed_topic_regex": None,
                                      "server_assignor": None, "topic_partitions": []})
    assert (answer["error_code"], answer["error_message"]) == (69, f"Group {group} is not a consumer group.")
    assert _group_type(broker, group) == "classic"
