"""Classic members of a consumer-protocol group, and the conversions between the protocols: the
timers and the corners no real client reaches easily (the side-by-side test with Kafka 4.4 and the
Java clients cover the rest)."""

from __future__ import annotations

import math
import struct

import pytest

from pykafkad.coordinator.group import classic_members
from pykafkad.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupConfig
from pykafkad.coordinator.group.consumer_member import MemberState
from pykafkad.coordinator.group.consumer_protocol import (
    MalformedProtocol,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from pykafkad.coordinator.group.member import Member
from pykafkad.coordinator.group.protocol_migration import (
    classic_members_of,
    consumer_group_from_classic,
    downgrade_enabled,
    upgrade_enabled,
)
from pykafkad.coordinator.group.requests import Heartbeat, JoinGroup, SyncGroup
from pykafkad.coordinator.group.tests.test_consumer_group import TOPIC, Topics, _heartbeat
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode

CONFIG = ConsumerGroupConfig(45000, 5000, 100, ("uniform", "range"), 0)


def _subscription(owned: list[int] | None = None, version: int = 1) -> bytes:
    out = struct.pack(">hih", version, 1, 1) + b"t" + struct.pack(">i", -1)
    if version >= 1:
        ps = owned or []
        out += struct.pack(">i", 1 if owned is not None else 0)
        if owned is not None:
            out += struct.pack(">h", 1) + b"t" + struct.pack(f">i{len(ps)}i", len(ps), *ps)
    return out


def _join(group: ConsumerGroup, member_id: str, now: float, owned: list[int] | None = None,
          protocols: list[str] | None = None) -> dict:
    args = JoinGroup(9, member_id, None, "c", "h", 30000, 20000, "consumer",
                     [(p, _subscription(owned)) for p in protocols or ["range"]])
    return classic_members.join(group, args, lambda: "new-id", now, Topics())


def test_the_embedded_protocol_round_trips_and_malformed_bytes_are_refused() -> None:
    assert decode_subscription(_subscription([1, 2])).owned_partitions == {"t": [1, 2]}
    assert decode_subscription(_subscription(version=0)).topics == ["t"]
    assert decode_assignment(encode_assignment({"t": [3, 1]}, 3)) == {"t": [1, 3]}
    assert decode_assignment(b"") == {}
    for bad in (b"", b"\x00", b"\x00\x01\x00\x00\x00\x09"):
        with pytest.raises(MalformedProtocol):
            decode_subscription(bad)


def test_a_classic_member_that_never_syncs_or_never_rejoins_is_fenced() -> None:
    group = ConsumerGroup("g", CONFIG)
    c = _join(group, "c", 0.0, owned=[])
    assert c["error_code"] == ErrorCode.NONE and group.members["c"].sync_deadline == 20.0
    assert group.expired_members(19.9) == []
    assert [m for m, _ in group.expired_members(20.0)] == ["c"]
    sync = SyncGroup("c", c["generation_id"], None, "consumer", "range", [])
    classic_members.sync(group, sync, 1.0, Topics())
    assert group.members["c"].sync_deadline == math.inf and group.members["c"].session_deadline == 31.0
    # A consumer-protocol member joins: c is told to rejoin, and has its rebalance timeout to do it.
    _heartbeat(group, "m", 0, 2.0, join=True)
    beat = Heartbeat("c", c["generation_id"], None)
    assert classic_members.heartbeat(group, beat, 3.0) == ErrorCode.REBALANCE_IN_PROGRESS
    assert classic_members.heartbeat(group, beat, 4.0) == ErrorCode.REBALANCE_IN_PROGRESS
    assert group.members["c"].join_deadline == 23.0  # counted from the first time it was told
    assert [m for m, _ in group.expired_members(23.0)] == ["c"]
    # Rejoining cancels it; revoking is not fenced by the rebalance timeout a consumer member has.
    _join(group, "c", 5.0, owned=[0, 1, 2, 3])
    assert group.members["c"].state == MemberState.UNREVOKED_PARTITIONS
    assert group.members["c"].join_deadline == math.inf and group.members["c"].rebalance_deadline == math.inf


def test_classic_requests_are_checked_as_kafka_checks_them() -> None:
    group = ConsumerGroup("g", CONFIG)
    _heartbeat(group, "m", 0, 0.0, join=True)
    with pytest.raises(KafkaError) as refused:
        classic_members.sync(group, SyncGroup("m", 1, None, "consumer", "range", []), 0.0, Topics())
    assert refused.value.code == ErrorCode.UNKNOWN_MEMBER_ID  # m speaks the consumer protocol
    c = _join(group, "c", 0.0, owned=[])
    with pytest.raises(KafkaError) as refused:
        classic_members.heartbeat(group, Heartbeat("c", c["generation_id"] + 1, None), 0.0)
    assert refused.value.code == ErrorCode.ILLEGAL_GENERATION
    with pytest.raises(KafkaError) as refused:
        classic_members.sync(group, SyncGroup("c", c["generation_id"], None, "consumer", "roundrobin", []), 0.0,
                             Topics())
    assert refused.value.code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert group.commit_error("c", c["generation_id"] + 1, version=8) == ErrorCode.ILLEGAL_GENERATION
    assert group.commit_error("c", c["generation_id"], version=8) is None
    assert group.commit_error("m", group.members["m"].member_epoch, version=8) == ErrorCode.UNSUPPORTED_VERSION
    results = classic_members.leave(group, [{"member_id": "m", "group_instance_id": None},
                                            {"member_id": "c", "group_instance_id": None}], Topics())
    assert [r["error_code"] for r in results] == [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE]


def test_a_classic_group_converts_with_its_assignment_and_back_with_its_target() -> None:
    subscription = _subscription()
    members = [Member("a", None, "c", "h", 20000, 10000, "consumer", [("range", subscription)],
                      assignment=encode_assignment({"t": [0, 1]}, 1)),
               Member("b", "i-b", "c", "h", 20000, 10000, "consumer", [("range", subscription)], assignment=b"")]
    group = consumer_group_from_classic("g", CONFIG, 5, "range", members, Topics(), 0.0)
    assert (group.group_epoch, group.assignment_epoch) == (5, 5)
    assert group.members["a"].assigned == {TOPIC: {0, 1}} and group.target["a"] == {TOPIC: {0, 1}}
    assert group.members["b"].assigned == {} and group.static_members == {"i-b": "b"}
    assert group.members["a"].session_deadline == 10.0 and group.state == "Stable"
    # A consumer-protocol member m joins, and leaves again: a and b go back with their targets.
    _heartbeat(group, "m", 0, 1.0, join=True)
    assert group.only_classic_members_except("m") and not group.only_classic_members_except("a")
    back = classic_members_of(group, "m")
    assert [m.member_id for m in back] == ["a", "b"] and back[1].group_instance_id == "i-b"

    garbled = [Member("x", None, "c", "h", 1, 1, "consumer", [("range", b"\x00\x01\xff")])]
    with pytest.raises(KafkaError) as refused:
        consumer_group_from_classic("g", CONFIG, 1, "range", garbled, Topics(), 0.0)
    assert refused.value.code == ErrorCode.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize(("policy", "up", "down"), [("bidirectional", True, True), ("UPGRADE", True, False),
                                                    ("downgrade", False, True), ("disabled", False, False)])
def test_the_migration_policy(policy: str, up: bool, down: bool) -> None:
    assert (upgrade_enabled(policy), downgrade_enabled(policy)) == (up, down)
