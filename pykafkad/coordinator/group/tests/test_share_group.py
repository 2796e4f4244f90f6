"""A share group's membership rules beside the side-by-side test: initialization before assignment,
session expiry, the assignment interval."""

from __future__ import annotations

from pykafkad.coordinator.group.share_group import ShareGroup, ShareGroupConfig, ShareHeartbeatFields
from pykafkad.coordinator.group.tests.test_consumer_group import TOPIC, Topics


def _beat(group: ShareGroup, member: str, epoch: int, now: float, join: bool = False) -> dict:
    response = group.heartbeat(ShareHeartbeatFields(member, epoch, None, ["t"] if join else None, "c", "h"), now,
                               Topics())
    group.initialized_now(group.to_initialize())
    return response


def test_partitions_are_assigned_once_initialized_and_a_silent_member_expires() -> None:
    group = ShareGroup("g", ShareGroupConfig(session_timeout_ms=45000, assignment_interval_ms=0))
    first = _beat(group, "m", 0, 0.0, join=True)
    assert first["assignment"] == {"topic_partitions": []} and group.initialized == {TOPIC: {0, 1, 2, 3}}
    second = _beat(group, "m", first["member_epoch"], 1.0)
    assert second["member_epoch"] > first["member_epoch"]
    assert second["assignment"] == {"topic_partitions": [{"topic_id": TOPIC, "partitions": [0, 1, 2, 3]}]}
    assert group.next_deadline() == 46.0 and group.expired_members(45.9) == []
    assert group.expired_members(46.0) == ["m"]
    group.remove_member("m")
    assert group.state == "Empty" and group.assignment_epoch == group.group_epoch


def test_the_assignment_interval_batches_new_targets() -> None:
    group = ShareGroup("g", ShareGroupConfig(assignment_interval_ms=1000))
    a = _beat(group, "a", 0, 0.0, join=True)
    a = _beat(group, "a", a["member_epoch"], 0.5)
    assert a["assignment"] is None  # the interval since the first target has not passed
    a = _beat(group, "a", a["member_epoch"], 1.0)
    assert a["assignment"]["topic_partitions"][0]["partitions"] == [0, 1, 2, 3]
