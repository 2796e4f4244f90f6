"""The classic group protocol request by request, over raw sockets: Kafka's error codes end to end.

Covers what stock clients rarely show on purpose: MEMBER_ID_REQUIRED (KIP-394), the leader
receiving every member's metadata, ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID /
REBALANCE_IN_PROGRESS, INCONSISTENT_GROUP_PROTOCOL, GROUP_MAX_SIZE_REACHED, static members
replaced without a rebalance and the old one fenced (FENCED_INSTANCE_ID), batched LeaveGroup,
simple (generation -1) commits only for groups without members, multi-group OffsetFetch,
batched FindCoordinator, DescribeGroups / DeleteGroups / OffsetDelete answers.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from compat_tests.clients import create_topic
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode as E

FIND_COORDINATOR, JOIN, HEARTBEAT, LEAVE, SYNC = 10, 11, 12, 13, 14
OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE, LIST, DELETE, OFFSET_DELETE = 8, 9, 15, 16, 42, 47
SUBSCRIPTION = b"\x00\x00\x00\x00\x00\x01\x00\x05topic\x00\x00\x00\x00"  # ConsumerProtocolSubscription v0


def join(conn: RawConnection, group: str, member_id: str = "", *, version: int = 5, instance: str | None = None,
         protocols: tuple[str, ...] = ("range",), protocol_type: str = "consumer") -> dict[str, Any]:
    return conn.request(JOIN, version, {
        "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 5000, "member_id": member_id,
        "group_instance_id": instance, "protocol_type": protocol_type, "reason": None,
        "protocols": [{"name": p, "metadata": SUBSCRIPTION} for p in protocols]})


def sync(conn: RawConnection, group: str, member_id: str, generation: int,
         assignments: dict[str, bytes] | None = None, instance: str | None = None,
         protocol_name: str | None = "range") -> dict[str, Any]:
    return conn.request(SYNC, 5, {
        "group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance,
        "protocol_type": "consumer", "protocol_name": protocol_name,
        "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]})


def heartbeat(conn: RawConnection, group: str, member_id: str, generation: int,
              instance: str | None = None) -> int:
    return conn.request(HEARTBEAT, 4, {"group_id": group, "generation_id": generation, "member_id": member_id,
                                       "group_instance_id": instance})["error_code"]


def commit(conn: RawConnection, group: str, member_id: str, generation: int, offset: int = 5,
           topic: str = "topic") -> int:
    r = conn.request(OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
        "group_instance_id": None, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
             "committed_metadata": "m"}]}]})
    return r["topics"][0]["partitions"][0]["error_code"]


def wait_for_coordinator(conn: RawConnection, *groups: str) -> None:
    """Until the groups' coordinator answers (Kafka says NOT_COORDINATOR while __consumer_offsets loads)."""
    deadline = time.monotonic() + 30
    while True:
        r = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": list(groups)})
        if all(x["error_code"] == E.NONE for x in r["coordinators"]):
            r = conn.request(DESCRIBE, 5, {"groups": list(groups), "include_authorized_operations": False})
            if all(g["error_code"] == E.NONE for g in r["groups"]):
                return
        assert time.monotonic() < deadline, f"no coordinator for {groups}: {r}"
        time.sleep(0.2)


def first_member(conn: RawConnection, group: str) -> tuple[str, int]:
    r = join(conn, group)
    assert r["error_code"] == E.MEMBER_ID_REQUIRED and r["member_id"]
    r = join(conn, group, r["member_id"])
    assert r["error_code"] == E.NONE, r
    assert r["leader"] == r["member_id"] and [m["member_id"] for m in r["members"]] == [r["member_id"]]
    assert r["members"][0]["metadata"] == SUBSCRIPTION
    return r["member_id"], r["generation_id"]


def in_thread(fn: Any, *args: Any, **kwargs: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        out["result"] = fn(*args, **kwargs)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


@pytest.fixture
def group_broker(broker_factory):
    return broker_factory("groups-protocol", {"group.initial.rebalance.delay.ms": "100", "group.max.size": "2",
                                              "auto.create.topics.enable": "false"})


@pytest.mark.compat_timeout(120)
def test_join_sync_heartbeat_errors_and_rebalance(group_broker) -> None:
    port = group_broker.port
    create_topic(group_broker.bootstrap, "topic", 2)
    with RawConnection(port) as c1, RawConnection(port) as c2, RawConnection(port) as c3:
        # The first lookup may find __consumer_offsets still being created (Kafka answers
        # COORDINATOR_NOT_AVAILABLE meanwhile); clients retry, and so does this.
        wait_for_coordinator(c1, "g", "h")
        r = c1.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g", "h"]})
        assert [(x["key"], x["error_code"], x["port"]) for x in r["coordinators"]] == [("g", 0, port), ("h", 0, port)]
        # A transactional id's coordinator: this broker, once __transaction_state is created.
        r = c1.request(FIND_COORDINATOR, 3, {"key": "tx", "key_type": 1})
        assert (r["error_code"], r["port"]) == (0, port)

        m1, gen = first_member(c1, "g")
        assert gen == 1
        assert sync(c1, "g", m1, gen + 1)["error_code"] == E.ILLEGAL_GENERATION
        # From v5 protocol type and name are mandatory in SyncGroup.
        assert sync(c1, "g", m1, gen, protocol_name=None)["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
        assert sync(c1, "g", "nobody", gen)["error_code"] == E.UNKNOWN_MEMBER_ID
        assert sync(c1, "g", m1, gen, protocol_name="sticky")["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
        r = sync(c1, "g", m1, gen, {m1: b"assignment-1"})
        assert (r["error_code"], r["assignment"], r["protocol_name"]) == (E.NONE, b"assignment-1", "range")
        assert heartbeat(c1, "g", m1, gen) == E.NONE
        assert heartbeat(c1, "g", m1, gen + 5) == E.ILLEGAL_GENERATION
        assert heartbeat(c1, "g", "nobody", gen) == E.UNKNOWN_MEMBER_ID

        # A member whose protocols share nothing with the group's is refused.
        r = join(c2, "g", version=3, protocols=("sticky",))
        assert r["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
        assert join(c2, "g", version=3, protocol_type="connect")["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL

        # A second member (v3: no MEMBER_ID_REQUIRED) starts a rebalance; the first learns it by heartbeat.
        t, second = in_thread(join, c2, "g", version=3, protocols=("roundrobin", "range"))
        for _ in range(100):
            if heartbeat(c1, "g", m1, gen) == E.REBALANCE_IN_PROGRESS:
                break
        else:
            raise AssertionError("heartbeat never reported REBALANCE_IN_PROGRESS")
        assert commit(c1, "g", m1, gen) == E.NONE  # commits with the current generation still count
        assert commit(c1, "g", m1, gen, topic="no-such-topic") == E.UNKNOWN_TOPIC_OR_PARTITION
        r1 = join(c1, "g", m1, protocols=("range", "roundrobin"))
        t.join(15)
        r2 = second["result"]
        m2 = r2["member_id"]
        assert r1["generation_id"] == r2["generation_id"] == gen + 1
        # One vote each: a tie, which Kafka leaves unspecified; both must be told the same one.
        assert r1["protocol_name"] == r2["protocol_name"] and r1["protocol_name"] in ("range", "roundrobin")
        leader = r1 if r1["leader"] == m1 else r2
        assert sorted(m["member_id"] for m in leader["members"]) == sorted([m1, m2])
        follower = r2 if leader is r1 else r1
        assert follower["members"] == []
        gen += 1
        # CompletingRebalance: commits wait for the assignment.
        assert commit(c1, "g", m1, gen) == E.REBALANCE_IN_PROGRESS
        chosen = r1["protocol_name"]
        t, follower_sync = in_thread(sync, c2 if follower is r2 else c1, "g", follower["member_id"], gen,
                                     protocol_name=chosen)
        r = sync(c1 if leader is r1 else c2, "g", leader["member_id"], gen,
                 {m1: b"a1", m2: b"a2"}, protocol_name=chosen)
        t.join(15)
        assert r["error_code"] == E.NONE and follower_sync["result"]["error_code"] == E.NONE
        assert {r["assignment"], follower_sync["result"]["assignment"]} == {b"a1", b"a2"}

        # group.max.size=2: a third member is turned away.
        r = join(c3, "g", version=3)
        assert r["error_code"] == E.GROUP_MAX_SIZE_REACHED
        # Simple (generation -1) commits are for groups without members.
        assert commit(c3, "g", "", -1) == E.UNKNOWN_MEMBER_ID
        assert commit(c3, "g", m1, gen) == E.NONE

        r = c3.request(DESCRIBE, 5, {"groups": ["g", "missing"], "include_authorized_operations": False})
        by_id = {x["group_id"]: x for x in r["groups"]}
        g, missing = by_id["g"], by_id["missing"]
        assert (g["group_state"], g["protocol_type"], g["protocol_data"]) == ("Stable", "consumer", r1["protocol_name"])
        assert sorted(m["member_assignment"] for m in g["members"]) == [b"a1", b"a2"]
        assert (missing["error_code"], missing["group_state"]) == (E.NONE, "Dead")
        r = c3.request(DELETE, 2, {"groups_names": ["g", "missing"]})
        assert sorted((x["group_id"], x["error_code"]) for x in r["results"]) == [
            ("g", E.NON_EMPTY_GROUP), ("missing", E.GROUP_ID_NOT_FOUND)]
        r = c3.request(OFFSET_DELETE, 0, {"group_id": "g", "topics": [
            {"name": "topic", "partitions": [{"partition_index": 0}]}]})
        assert r["topics"][0]["partitions"][0]["error_code"] == E.GROUP_SUBSCRIBED_TO_TOPIC

        # Batched leave (v3+): both members at once, plus one the group does not know.
        r = c3.request(LEAVE, 5, {"group_id": "g", "members": [
            {"member_id": m1, "group_instance_id": None, "reason": None},
            {"member_id": m2, "group_instance_id": None, "reason": None},
            {"member_id": "ghost", "group_instance_id": None, "reason": None}]})
        assert [x["error_code"] for x in r["members"]] == [E.NONE, E.NONE, E.UNKNOWN_MEMBER_ID]
        r = c3.request(LIST, 5, {"states_filter": ["Empty"], "types_filter": []})
        assert [(x["group_id"], x["group_state"], x["group_type"]) for x in r["groups"]] == [
            ("g", "Empty", "classic")]
        # Now empty: simple commits are accepted, and the group can be deleted.
        assert commit(c3, "g", "", -1, offset=7) == E.NONE
        r = c3.request(OFFSET_FETCH, 8, {"groups": [
            {"group_id": "g", "topics": [{"name": "topic", "partition_indexes": [0, 1]}]},
            {"group_id": "other", "topics": None}], "require_stable": True})
        by_id = {x["group_id"]: x for x in r["groups"]}
        g, other = by_id["g"], by_id["other"]
        assert [(p["committed_offset"], p["metadata"]) for p in g["topics"][0]["partitions"]] == [(7, "m"), (-1, "")]
        assert (other["error_code"], other["topics"]) == (E.NONE, [])
        assert c3.request(DELETE, 2, {"groups_names": ["g"]})["results"][0]["error_code"] == E.NONE
        r = c3.request(OFFSET_FETCH, 5, {"group_id": "g", "topics": None, "require_stable": False})
        assert r["topics"] == []


@pytest.mark.compat_timeout(60)
def test_static_member_replaced_without_rebalance_and_old_one_fenced(group_broker) -> None:
    with RawConnection(group_broker.port) as c1, RawConnection(group_broker.port) as c2:
        wait_for_coordinator(c1, "s")
        r = join(c1, "s", instance="inst-1")  # static members skip MEMBER_ID_REQUIRED
        assert r["error_code"] == E.NONE and r["member_id"].startswith("inst-1-")
        old, gen = r["member_id"], r["generation_id"]
        assert sync(c1, "s", old, gen, {old: b"mine"}, instance="inst-1")["assignment"] == b"mine"

        # The same instance id joins again (a restart): new member id, same generation, no rebalance.
        r = join(c2, "s", instance="inst-1")
        assert r["error_code"] == E.NONE and r["generation_id"] == gen and r["member_id"] != old
        new = r["member_id"]
        assert r["leader"] != new and r["members"] == []  # not told to lead: nothing to reassign
        r = sync(c2, "s", new, gen, instance="inst-1")
        assert (r["error_code"], r["assignment"]) == (E.NONE, b"mine")
        assert heartbeat(c2, "s", new, gen, instance="inst-1") == E.NONE

        # The old incarnation is fenced everywhere.
        assert heartbeat(c1, "s", old, gen, instance="inst-1") == E.FENCED_INSTANCE_ID
        assert sync(c1, "s", old, gen, instance="inst-1")["error_code"] == E.FENCED_INSTANCE_ID
        assert join(c1, "s", old, instance="inst-1")["error_code"] == E.FENCED_INSTANCE_ID
        r = c1.request(DESCRIBE, 5, {"groups": ["s"], "include_authorized_operations": False})
        assert [(m["member_id"], m["group_instance_id"]) for m in r["groups"][0]["members"]] == [(new, "inst-1")]

        # LeaveGroup by instance id alone (what a static member's admin removal sends).
        r = c1.request(LEAVE, 4, {"group_id": "s", "members": [{"member_id": "", "group_instance_id": "inst-1"}]})
        assert r["members"][0]["error_code"] == E.NONE
