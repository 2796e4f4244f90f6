"""Consumer groups with a mix of stock clients: partitions shared, handed over, none skipped.

confluent-kafka, kafka-python and aiokafka consumers subscribe() to one 6-partition topic in
one group.  At every generation the test waits for, each partition has exactly one owner (in
the broker's DescribeGroups and in the consumers' own views); a joining member triggers a
rebalance; a member killed with SIGKILL loses its partitions within the session timeout; and
every produced record is consumed at least once.
"""

from __future__ import annotations

import pytest

from compat_tests.clients import create_topic, unique_topic
from compat_tests.groups_support import (
    GROUP_BROKER_OVERRIDES,
    MemberProcess,
    all_offsets,
    end_offsets,
    produce_spread,
    wait_for_stable,
    wait_until,
)

PARTITIONS = 6


@pytest.mark.compat_timeout(170)
def test_mixed_clients_share_and_hand_over_partitions(broker_factory) -> None:
    broker = broker_factory("groups-mixed", GROUP_BROKER_OVERRIDES)
    topic, group = unique_topic("grp-mixed"), unique_topic("g-mixed")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce_spread(broker.bootstrap, topic, 120, PARTITIONS, "a")
    members: list[MemberProcess] = []
    try:
        a = MemberProcess("confluent", broker.bootstrap, group, topic, "--strategy", "range,roundrobin")
        b = MemberProcess("kafka-python", broker.bootstrap, group, topic)
        members = [a, b]
        view = wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        assert view.protocol == "range"  # both prefer range

        # aiokafka only offers roundrobin: the group must switch to the one protocol all share.
        c = MemberProcess("aiokafka", broker.bootstrap, group, topic)
        members.append(c)
        view = wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        assert view.protocol == "roundrobin"
        assert all(m.assignment() for m in members), members

        produce_spread(broker.bootstrap, topic, 120, PARTITIONS, "b")
        # kafka-python dies without leaving: its partitions move once its session (6 s) expires.
        b.kill()
        members.remove(b)
        view = wait_for_stable(broker.bootstrap, group, members, PARTITIONS, timeout=30)
        produce_spread(broker.bootstrap, topic, 60, PARTITIONS, "c")

        expected = all_offsets(end_offsets(broker.bootstrap, topic, PARTITIONS))
        assert len(expected) == 300

        def consumed() -> set[tuple[int, int]]:
            return set().union(*(m.records() for m in (a, b, c)))

        wait_until(lambda: expected <= consumed(), 40,
                   lambda: f"records never consumed: {sorted(expected - consumed())[:20]}")
        for m in members:
            m.stop()
            assert m.of_kind("closed"), f"{m.name} did not close cleanly\n{m.stderr()}"
    finally:
        for m in members:
            if m.alive:
                m.kill()
