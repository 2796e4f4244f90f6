"""Helpers for the group timeout tests (test_groups_timeouts.py): admin look-ups and raw group requests.

* `committed_offsets` / `listed_groups`: what OffsetFetch and ListGroups say, through
  confluent-kafka's AdminClient, every call with a timeout.
* `RawMember`: one classic-protocol member over its own `RawConnection` (JoinGroup with the
  KIP-394 MEMBER_ID_REQUIRED round trip, SyncGroup, Heartbeat, OffsetCommit), for the cases a
  stock client never produces on purpose: a member that stops heartbeating, or never rejoins.
* `describe_raw`, `wait_for_coordinator`, `poll_until`: DescribeGroups over a raw connection,
  waiting until the coordinator answers, and polling for an outcome with a deadline.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode as E

ADMIN_TIMEOUT_S = 15.0
OFFSET_COMMIT, FIND_COORDINATOR, JOIN, HEARTBEAT, SYNC, DESCRIBE = 8, 10, 11, 12, 14, 15

# Short group timeouts: sessions down to 1 s, no initial rebalance delay.
TIMEOUTS_BROKER_OVERRIDES = {
    "group.min.session.timeout.ms": "1000",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "false",
    "offsets.topic.num.partitions": "5",
}

T = TypeVar("T")


def poll_until(probe: Callable[[], T | None], timeout: float, message: Callable[[], str] | str,
               interval: float = 0.25) -> T:
    """Call ``probe`` until it returns something other than None (or False); fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result is not None and result is not False:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(interval)


# -- admin look-ups (confluent-kafka) -------------------------------------------------------------

def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """OffsetFetch for the group's partitions of ``topic``: partition -> committed offset, only those set."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])
    result = admin.list_consumer_group_offsets([request], request_timeout=ADMIN_TIMEOUT_S)[group]
    tps = result.result(ADMIN_TIMEOUT_S).topic_partitions
    return {tp.partition: tp.offset for tp in tps if tp.offset >= 0}


def all_committed_offsets(bootstrap: str, group: str) -> list[tuple[str, int, int]]:
    """OffsetFetch for every partition the group has an offset for (no topics named)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                               request_timeout=ADMIN_TIMEOUT_S)[group]
    return sorted((tp.topic, tp.partition, tp.offset) for tp in result.result(ADMIN_TIMEOUT_S).topic_partitions)


def listed_groups(bootstrap: str) -> dict[str, str]:
    """ListGroups: group id -> state name (e.g. ``EMPTY``, ``STABLE``)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    listing = admin.list_consumer_groups(request_timeout=ADMIN_TIMEOUT_S).result(ADMIN_TIMEOUT_S)
    return {g.group_id: g.state.name for g in listing.valid}


# -- raw group requests ---------------------------------------------------------------------------

def subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0 for ``topics`` with empty user data."""
    out = [struct.pack(">hi", 0, len(topics))]
    for t in topics:
        raw = t.encode()
        out.append(struct.pack(">h", len(raw)) + raw)
    out.append(struct.pack(">i", 0))
    return b"".join(out)


def assignment(topic: str, partitions: list[int]) -> bytes:
    """ConsumerProtocolAssignment v0: ``partitions`` of ``topic``, empty user data."""
    raw = topic.encode()
    return (struct.pack(">hi", 0, 1) + struct.pack(">h", len(raw)) + raw
            + struct.pack(">i", len(partitions)) + b"".join(struct.pack(">i", p) for p in partitions)
            + struct.pack(">i", 0))


def describe_raw(conn: RawConnection, group: str) -> dict[str, Any]:
    """DescribeGroups v5 for one group: its entry (state, protocol, members)."""
    return conn.request(DESCRIBE, 5, {"groups": [group], "include_authorized_operations": False})["groups"][0]


def wait_for_coordinator(conn: RawConnection, group: str, timeout: float = 30.0) -> None:
    """Until FindCoordinator and DescribeGroups answer without error (__consumer_offsets may be loading)."""
    def ready() -> bool:
        r = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
        if r["coordinators"][0]["error_code"] != E.NONE:
            return False
        return describe_raw(conn, group)["error_code"] == E.NONE

    poll_until(ready, timeout, f"no coordinator for group {group} within {timeout}s")


class RawMember:
    """One classic-protocol consumer-group member speaking raw requests over its own connection."""

    def __init__(self, port: int, group: str, topic: str, *, session_ms: int, rebalance_ms: int) -> None:
        self.conn = RawConnection(port)
        self.group = group
        self.topic = topic
        self.session_ms = session_ms
        self.rebalance_ms = rebalance_ms
        self.member_id = ""
        self.generation = -1

    def close(self) -> None:
        self.conn.close()

    def _join_request(self) -> dict[str, Any]:
        return self.conn.request(JOIN, 5, {
            "group_id": self.group, "session_timeout_ms": self.session_ms,
            "rebalance_timeout_ms": self.rebalance_ms, "member_id": self.member_id, "group_instance_id": None,
            "protocol_type": "consumer", "reason": None,
            "protocols": [{"name": "range", "metadata": subscription(self.topic)}]})

    def join(self) -> dict[str, Any]:
        """JoinGroup until it is answered with a generation (MEMBER_ID_REQUIRED first for a new member).

        Blocks while the coordinator holds the join for the rebalance; returns the JoinGroup response.
        """
        r = self._join_request()
        if r["error_code"] == E.MEMBER_ID_REQUIRED:
            self.member_id = r["member_id"]
            r = self._join_request()
        assert r["error_code"] == E.NONE, f"JoinGroup for {self.group}: {r}"
        self.member_id, self.generation = r["member_id"], r["generation_id"]
        return r

    def sync(self, assignments: dict[str, bytes] | None = None) -> dict[str, Any]:
        return self.conn.request(SYNC, 5, {
            "group_id": self.group, "generation_id": self.generation, "member_id": self.member_id,
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]})

    def heartbeat(self) -> int:
        return self.conn.request(HEARTBEAT, 4, {"group_id": self.group, "generation_id": self.generation,
                                                "member_id": self.member_id, "group_instance_id": None})["error_code"]

    def commit(self, partition: int, offset: int) -> int:
        r = self.conn.request(OFFSET_COMMIT, 8, {
            "group_id": self.group, "generation_id_or_member_epoch": self.generation, "member_id": self.member_id,
            "group_instance_id": None, "topics": [{"name": self.topic, "partitions": [
                {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
                 "committed_metadata": ""}]}]})
        return r["topics"][0]["partitions"][0]["error_code"]

    def join_and_sync_alone(self) -> None:
        """Join as the only member, lead, and take every partition the test cares about (0)."""
        r = self.join()
        assert r["leader"] == self.member_id, r
        s = self.sync({self.member_id: assignment(self.topic, [0])})
        assert s["error_code"] == E.NONE, s

    def __enter__(self) -> RawMember:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
