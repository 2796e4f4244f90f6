"""confluent-kafka (librdkafka) groups: cooperative-sticky and static membership.

* cooperative-sticky: when a member joins and later leaves, partitions that stay with a
  member are never revoked from it; only the ones that move are.
* static membership (group.instance.id): a member killed and restarted within the session
  timeout gets the same partitions back with no rebalance (the other member sees no revoke or
  assign); a second live consumer with the same instance id fences the older one
  (FENCED_INSTANCE_ID).
"""

from __future__ import annotations

import pytest

from compat_tests.clients import create_topic, unique_topic
from compat_tests.groups_support import GROUP_BROKER_OVERRIDES, MemberProcess, wait_for_stable, wait_until

PARTITIONS = 6


def _revoked(m: MemberProcess) -> list[int]:
    return [p for e in m.of_kind("revoked") for p in e["parts"]]


@pytest.mark.compat_timeout(120)
def test_cooperative_sticky_never_revokes_partitions_that_stay(broker_factory) -> None:
    broker = broker_factory("groups-coop", GROUP_BROKER_OVERRIDES)
    topic, group = unique_topic("grp-coop"), unique_topic("g-coop")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    coop = ("--strategy", "cooperative-sticky")
    a = MemberProcess("confluent", broker.bootstrap, group, topic, *coop, name="a")
    members = [a]
    try:
        view = wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        assert view.protocol == "cooperative-sticky"
        assert a.assignment() == set(range(PARTITIONS)) and _revoked(a) == []

        b = MemberProcess("confluent", broker.bootstrap, group, topic, *coop, name="b")
        members.append(b)
        wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        kept, moved = a.assignment(), b.assignment()
        assert len(kept) == len(moved) == PARTITIONS // 2
        # Only what moved to b was revoked from a (incrementally); what a kept never left it.
        assert sorted(_revoked(a)) == sorted(moved)
        assert not [e for e in a.of_kind("assigned") if kept - set(e["parts"]) and e["parts"]], \
            "a partition that stayed with a was taken away and given back"

        b.stop()
        members.remove(b)
        wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        assert sorted(_revoked(a)) == sorted(moved), "a lost partitions when b left"
        a.stop()
        members.remove(a)
    finally:
        for m in members:
            if m.alive:
                m.kill()


@pytest.mark.compat_timeout(120)
def test_static_member_restart_without_rebalance_and_duplicate_fenced(broker_factory) -> None:
    broker = broker_factory("groups-static", GROUP_BROKER_OVERRIDES)
    topic, group = unique_topic("grp-static"), unique_topic("g-static")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    static = ("--session-ms", "15000", "--strategy", "range")
    a = MemberProcess("confluent", broker.bootstrap, group, topic, *static, "--instance-id", "inst-a", name="a")
    b = MemberProcess("confluent", broker.bootstrap, group, topic, *static, "--instance-id", "inst-b", name="b")
    members = [a, b]
    try:
        wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        before = a.assignment()
        b_events = len(b.of_kind("cb_assigned")) + len(b.of_kind("revoked"))

        # a dies and comes back under the same instance id well within its 15 s session.
        a.kill()
        members.remove(a)
        a2 = MemberProcess("confluent", broker.bootstrap, group, topic, *static, "--instance-id", "inst-a",
                           name="a2")
        members.append(a2)
        wait_for_stable(broker.bootstrap, group, members, PARTITIONS)
        assert a2.assignment() == before
        assert len(b.of_kind("cb_assigned")) + len(b.of_kind("revoked")) == b_events, \
            f"b saw a rebalance: {b.snapshot()}"

        # A second live consumer with instance id inst-a takes the id over; the older one is fenced.
        a3 = MemberProcess("confluent", broker.bootstrap, group, topic, *static, "--instance-id", "inst-a",
                           name="a3")
        members.append(a3)

        def fenced() -> bool:
            return any("FENCED" in (e["name"] + e["text"]).upper() for m in (a2, a3) for e in m.of_kind("error"))

        wait_until(fenced, 30, lambda: f"no member was fenced: {a2.snapshot()[-5:]} {a3.snapshot()[-5:]}")
        assert any("FENCED" in (e["name"] + e["text"]).upper() for e in a2.of_kind("error")), \
            "the older incarnation must be the fenced one"
        assert len(b.of_kind("cb_assigned")) + len(b.of_kind("revoked")) == b_events
    finally:
        for m in members:
            if m.alive:
                m.kill()
