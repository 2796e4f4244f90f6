"""A consumer-protocol group's membership rules that no real client reaches easily."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from pykafkad.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupConfig, HeartbeatFields
from pykafkad.coordinator.group.consumer_member import MemberState

TOPIC = uuid.UUID(int=7)


class Topics:
    def topic(self, name: str) -> tuple[uuid.UUID, int] | None:
        return (TOPIC, 4) if name == "t" else None

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return "t" if topic_id == TOPIC else None

    def regex_candidates(self) -> Iterator[str]:
        return iter(["t"])

    def consumer_timeouts(self, group_id: str) -> tuple[int, int]:
        return 45000, 5000


def _heartbeat(group: ConsumerGroup, member_id: str, epoch: int, now: float, *, instance: str | None = None,
               owned: list[int] | None = None, join: bool = False) -> dict:
    fields = HeartbeatFields(member_id, epoch, instance, None, 30000 if join else -1, ["t"] if join else None, None,
                             None, [] if join else (None if owned is None else [{"topic_id": TOPIC,
                                                                                  "partitions": owned}]), "c", "h")
    return group.heartbeat(fields, now, Topics())


def test_a_static_member_away_releases_what_it_had_to_revoke_and_is_not_fenced_meanwhile() -> None:
    group = ConsumerGroup("g", ConsumerGroupConfig(45000, 5000, 100, ("uniform", "range"), 0))
    s = _heartbeat(group, "s", 0, 0.0, instance="i-s", join=True)
    assert s["assignment"]["topic_partitions"][0]["partitions"] == [0, 1, 2, 3]
    t = _heartbeat(group, "t", 0, 1.0, join=True)
    _heartbeat(group, "s", s["member_epoch"], 2.0, instance="i-s")
    assert group.members["s"].state == MemberState.UNREVOKED_PARTITIONS
    # s leaves for a while (-2): what it had to give up goes to t at once.
    _heartbeat(group, "s", -2, 3.0, instance="i-s")
    got = _heartbeat(group, "t", t["member_epoch"], 4.0, owned=[])
    assert set(got["assignment"]["topic_partitions"][0]["partitions"]) == group.target["t"][TOPIC]
    assert len(group.target["t"][TOPIC]) == 2
    # Its rebalance timeout (30 s) passes: it is still there, waiting for its instance id to return.
    group.fire_timers(40.0, lambda _: None)
    assert "s" in group.members and group.members["s"].member_epoch == -2
