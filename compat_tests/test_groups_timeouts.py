"""Group timers with real clients: offset retention, max.poll.interval.ms, rebalance and session timeouts.

* `offsets.retention.minutes=1`: the offsets of a group that became Empty are gone (OffsetFetch,
  ListGroups, kafka-consumer-groups) once the retention has passed since it emptied, as are the
  simple (assign()) commits of a group that never had members; a group whose member keeps
  polling keeps its offsets over the same time (Kafka, KIP-211).  The expiry is durable:
  after a kill -9 restart the expired offsets stay gone and the kept ones are still there.
* `max.poll.interval.ms`: of two confluent-kafka consumers on a 4-partition topic, the one that
  stops calling poll() leaves; the other ends up with all 4 partitions and reads every record.
* Rebalance timeout: a raw member that joined but does not rejoin when a rebalance starts is
  removed once the rebalance timeout passes, and the new generation completes without it.
* Session timeout: a raw member that stops heartbeating after SyncGroup is removed and the
  group goes Empty (its committed offset stays).

No timing is asserted: each test polls for the outcome with a generous deadline.
"""

from __future__ import annotations

import threading
import time

import confluent_kafka
import pytest

from compat_tests.clients import create_topic, unique_topic
from compat_tests.groups_support import describe_group, end_offsets, produce_spread
from compat_tests.groups_timeouts_support import (
    TIMEOUTS_BROKER_OVERRIDES,
    RawMember,
    all_committed_offsets,
    committed_offsets,
    describe_raw,
    listed_groups,
    poll_until,
    wait_for_coordinator,
)
from compat_tests.java_tools import run_tool
from wire.error_codes import ErrorCode as E

EXPIRY_DEADLINE_S = 150.0


def _consumer(bootstrap: str, group: str, **extra: object) -> confluent_kafka.Consumer:
    return confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500, **extra})


def _poll_records(c: confluent_kafka.Consumer, want: int, timeout: float = 30.0) -> set[tuple[int, int]]:
    """Poll until ``want`` distinct (partition, offset) records arrived."""
    got: set[tuple[int, int]] = set()
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.add((m.partition(), m.offset()))
    assert len(got) >= want, f"only {len(got)} of {want} records within {timeout}s: {sorted(got)}"
    return got


def _commit(c: confluent_kafka.Consumer, topic: str, offsets: dict[int, int]) -> None:
    result = c.commit(offsets=[confluent_kafka.TopicPartition(topic, p, o) for p, o in offsets.items()],
                      asynchronous=False)
    assert result is not None and all(tp.error is None for tp in result), result


@pytest.mark.compat_timeout(EXPIRY_DEADLINE_S + 60)
def test_offsets_of_empty_group_expire_and_stay_expired_after_restart(broker_factory) -> None:
    broker = broker_factory("groups-expiry", {**TIMEOUTS_BROKER_OVERRIDES, "offsets.retention.minutes": "1",
                                              "offsets.retention.check.interval.ms": "1000"})
    bs = broker.bootstrap
    topic = unique_topic("grp-expiry")
    kept, expiring, simple = unique_topic("g-kept"), unique_topic("g-expiring"), unique_topic("g-simple")
    create_topic(bs, topic, 2)
    produce_spread(bs, topic, 10, 2, "e")

    # A member that stays: commits once (no auto-commit refreshes it) and keeps polling throughout.
    keeper = _consumer(bs, kept)
    keeper.subscribe([topic])
    try:
        assert len(_poll_records(keeper, 10)) == 10
        _commit(keeper, topic, {0: 3, 1: 3})

        # A member that commits and leaves: its group is Empty from the close on.
        leaver = _consumer(bs, expiring)
        leaver.subscribe([topic])
        try:
            assert len(_poll_records(leaver, 10)) == 10
            _commit(leaver, topic, {0: 4, 1: 4})
        finally:
            leaver.close()
        # assign() commits (generation -1) to a group that never had a member.
        assigned = _consumer(bs, simple)
        try:
            assigned.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(2)])
            _commit(assigned, topic, {0: 2, 1: 2})
        finally:
            assigned.close()

        assert committed_offsets(bs, expiring, topic, 2) == {0: 4, 1: 4}
        assert committed_offsets(bs, simple, topic, 2) == {0: 2, 1: 2}
        groups = listed_groups(bs)
        assert groups.get(expiring) == "EMPTY" and simple in groups and groups.get(kept) == "STABLE", groups

        # Keep the kept member polling while waiting for the other two groups' offsets to expire.
        state: dict[str, object] = {}

        def expired() -> bool:
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                m = keeper.poll(0.2)
                assert m is None or m.error() is None or not m.error().fatal(), m.error()
            state["expiring"] = committed_offsets(bs, expiring, topic, 2)
            state["simple"] = committed_offsets(bs, simple, topic, 2)
            return state["expiring"] == {} and state["simple"] == {}

        poll_until(expired, EXPIRY_DEADLINE_S, lambda: f"offsets not expired within {EXPIRY_DEADLINE_S}s: {state}",
                   interval=0)

        # The expired groups are gone everywhere; the one with a live member kept its offsets.
        assert all_committed_offsets(bs, expiring) == [] and all_committed_offsets(bs, simple) == []
        assert committed_offsets(bs, kept, topic, 2) == {0: 3, 1: 3}
        groups = listed_groups(bs)
        assert expiring not in groups and simple not in groups and groups.get(kept) == "STABLE", groups
        assert expiring not in run_tool("kafka-consumer-groups", ["--bootstrap-server", bs, "--list"]).stdout.split()
        out = run_tool("kafka-consumer-groups", ["--bootstrap-server", bs, "--describe", "--group", expiring],
                       check=False)
        # Kafka 4.4's tool asks DescribeGroups v6, which answers GROUP_ID_NOT_FOUND (KIP-1043).
        assert f"Group {expiring} not found" in out.stdout + out.stderr and topic not in out.stdout, out
        out = run_tool("kafka-consumer-groups", ["--bootstrap-server", bs, "--describe", "--group", kept])
        rows = [line.split() for line in out.stdout.splitlines() if line.split()[:2] == [kept, topic]]
        assert sorted((r[2], r[3]) for r in rows) == [("0", "3"), ("1", "3")], out.stdout
    finally:
        keeper.close()

    # The expiry was written to __consumer_offsets: a kill -9 restart does not bring the offsets back.
    broker.restart(graceful=False)
    assert committed_offsets(bs, expiring, topic, 2) == {}
    assert committed_offsets(bs, simple, topic, 2) == {}
    assert committed_offsets(bs, kept, topic, 2) == {0: 3, 1: 3}
    groups = listed_groups(bs)
    assert expiring not in groups and simple not in groups and groups.get(kept) == "EMPTY", groups


@pytest.mark.compat_timeout(120)
def test_consumer_that_stops_polling_leaves_and_the_other_takes_every_partition(broker_factory) -> None:
    broker = broker_factory("groups-max-poll", TIMEOUTS_BROKER_OVERRIDES)
    bs = broker.bootstrap
    topic, group = unique_topic("grp-max-poll"), unique_topic("g-max-poll")
    create_topic(bs, topic, 4)
    produce_spread(bs, topic, 40, 4, "before")
    cfg = {"session.timeout.ms": 3000, "max.poll.interval.ms": 6000, "enable.auto.commit": True,
           "auto.commit.interval.ms": 200, "partition.assignment.strategy": "range"}
    survivor, staller = _consumer(bs, group, **cfg), _consumer(bs, group, **cfg)
    seen: dict[str, set[tuple[int, int]]] = {"survivor": set(), "staller": set()}

    def poll(name: str, c: confluent_kafka.Consumer) -> None:
        m = c.poll(0.1)
        if m is not None and m.error() is None:
            seen[name].add((m.partition(), m.offset()))

    try:
        survivor.subscribe([topic])
        staller.subscribe([topic])

        def split_two_ways() -> bool:
            poll("survivor", survivor)
            poll("staller", staller)
            mine = [{tp.partition for tp in c.assignment()} for c in (survivor, staller)]
            return all(len(a) == 2 for a in mine) and mine[0] | mine[1] == {0, 1, 2, 3}

        poll_until(split_two_ways, 40, lambda: f"group never split 4 partitions two ways: "
                   f"{survivor.assignment()} / {staller.assignment()}", interval=0)
        staller_parts = {tp.partition for tp in staller.assignment()}

        def both_read_some() -> bool:
            poll("survivor", survivor)
            poll("staller", staller)
            return any(p in staller_parts for p, _ in seen["staller"]) and bool(seen["survivor"])

        poll_until(both_read_some, 30, lambda: f"records never reached both consumers: {seen}", interval=0)

        # The staller never polls again; records keep arriving on its partitions too.
        produce_spread(bs, topic, 40, 4, "after")
        ends = end_offsets(bs, topic, 4)
        everything = {(p, o) for p, end in ends.items() for o in range(end)}

        def survivor_owns_all() -> bool:
            poll("survivor", survivor)
            if {tp.partition for tp in survivor.assignment()} != {0, 1, 2, 3}:
                return False
            view = describe_group(bs, group)
            return (view.state == "STABLE" and len(view.assignments) == 1
                    and view.assignments[0] == frozenset(range(4)))

        poll_until(survivor_owns_all, 60, lambda: f"survivor never owned all partitions: "
                   f"{survivor.assignment()} {describe_group(bs, group)}", interval=0)

        # It keeps consuming: every record ends up read (those the staller read before stalling count).
        def all_read() -> bool:
            poll("survivor", survivor)
            return everything <= seen["survivor"] | seen["staller"]

        poll_until(all_read, 30, lambda: f"records never read: "
                   f"{sorted(everything - seen['survivor'] - seen['staller'])}", interval=0)
        assert {(p, o) for p, o in everything if o >= 10} <= seen["survivor"]
        # The staller learns on its next poll that it was out of the group for exceeding the interval.
        def max_poll_exceeded() -> bool:
            m = staller.poll(0.5)
            return m is not None and m.error() is not None and \
                m.error().code() == confluent_kafka.KafkaError._MAX_POLL_EXCEEDED

        poll_until(max_poll_exceeded, 10, "the staller's poll() never reported _MAX_POLL_EXCEEDED", interval=0)
    finally:
        survivor.close()
        staller.close()


@pytest.mark.compat_timeout(60)
def test_member_that_does_not_rejoin_is_removed_after_the_rebalance_timeout(broker_factory) -> None:
    broker = broker_factory("groups-rebalance-timeout", TIMEOUTS_BROKER_OVERRIDES)
    topic, group = unique_topic("grp-rebalance-timeout"), unique_topic("g-rebalance-timeout")
    create_topic(broker.bootstrap, topic, 1)
    # Long sessions: only the rebalance timeout (3 s) can remove the silent member.
    with RawMember(broker.port, group, topic, session_ms=30000, rebalance_ms=3000) as silent, \
            RawMember(broker.port, group, topic, session_ms=30000, rebalance_ms=3000) as newcomer:
        wait_for_coordinator(silent.conn, group)
        silent.join_and_sync_alone()
        assert silent.heartbeat() == E.NONE
        first_generation = silent.generation

        # The newcomer's join starts a rebalance and is held until it completes; watch it from outside.
        joined: dict[str, object] = {}
        t = threading.Thread(target=lambda: joined.setdefault("r", newcomer.join()), daemon=True)
        t.start()
        with RawMember(broker.port, group, topic, session_ms=30000, rebalance_ms=3000) as observer:
            def preparing_with_both() -> dict[str, object] | None:
                d = describe_raw(observer.conn, group)
                return d if d["group_state"] == "PreparingRebalance" and len(d["members"]) == 2 else None

            poll_until(preparing_with_both, 10, lambda: f"no rebalance with both members: "
                       f"{describe_raw(observer.conn, group)}", interval=0.05)
            t.join(20)
            assert not t.is_alive(), "the newcomer's JoinGroup was never answered"
            r = joined["r"]
            assert isinstance(r, dict)
            # The generation completed without the member that never rejoined.
            assert r["generation_id"] == first_generation + 1 and r["leader"] == newcomer.member_id
            assert [m["member_id"] for m in r["members"]] == [newcomer.member_id]
            assert newcomer.sync({newcomer.member_id: b"all"})["error_code"] == E.NONE
            d = describe_raw(observer.conn, group)
            assert d["group_state"] == "Stable" and [m["member_id"] for m in d["members"]] == [newcomer.member_id]
        assert silent.heartbeat() == E.UNKNOWN_MEMBER_ID
        assert silent.sync()["error_code"] == E.UNKNOWN_MEMBER_ID
        assert newcomer.heartbeat() == E.NONE


@pytest.mark.compat_timeout(60)
def test_member_that_stops_heartbeating_is_removed_and_group_goes_empty(broker_factory) -> None:
    broker = broker_factory("groups-session-timeout", TIMEOUTS_BROKER_OVERRIDES)
    topic, group = unique_topic("grp-session-timeout"), unique_topic("g-session-timeout")
    create_topic(broker.bootstrap, topic, 1)
    with RawMember(broker.port, group, topic, session_ms=2000, rebalance_ms=3000) as member:
        wait_for_coordinator(member.conn, group)
        member.join_and_sync_alone()
        assert member.commit(0, 5) == E.NONE
        generation = member.generation

        # Heartbeats keep it in the group for well over its session timeout.
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            assert member.heartbeat() == E.NONE
            time.sleep(0.25)
        d = describe_raw(member.conn, group)
        assert d["group_state"] == "Stable" and [m["member_id"] for m in d["members"]] == [member.member_id]

        # Silence: the session expires, the member is removed and the group is left Empty.
        def empty() -> dict[str, object] | None:
            d = describe_raw(member.conn, group)
            return d if d["group_state"] == "Empty" else None

        d = poll_until(empty, 20, lambda: f"group never went Empty: {describe_raw(member.conn, group)}")
        assert d["members"] == [] and d["error_code"] == E.NONE
        assert member.heartbeat() == E.UNKNOWN_MEMBER_ID
        assert listed_groups(broker.bootstrap).get(group) == "EMPTY"
        # Only the membership went: the group and its committed offset remain.
        assert committed_offsets(broker.bootstrap, group, topic, 1) == {0: 5}
        # A new member starts the next generation.
        member.member_id = ""
        r = member.join()
        assert r["generation_id"] > generation and r["leader"] == member.member_id
