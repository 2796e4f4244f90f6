"""Share groups' membership (KIP-932) side by side with the reference Kafka 4.4.0: the same
ShareGroupHeartbeat and ShareGroupDescribe requests get the same answers from pykafkad and from
Kafka: Kafka's request checks and messages, a new member's empty first assignment, the ``simple``
assignor's counts once the partitions are assignable (which member gets which partition follows how
Kafka hashes member ids, so sizes are compared), epochs moving as members join and leave, fencing,
the group as ListGroups, DescribeGroups, ConsumerGroupHeartbeat and DeleteGroups see it, and
``share.version`` gating it all.

Kafka makes a share group's partitions assignable only once their share state is written, some time
after the first heartbeat: the steps wait for assignments, never for a fixed time.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.conftest import REFERENCE_OVERRIDES
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection
from compat_tests.test_consumer_group_heartbeat_kafka import _ready

SHARE_HEARTBEAT, SHARE_DESCRIBE, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 77, 78, 79
TOPIC, PARTITIONS = "sg-t", 3
WAIT_S = 60.0


@pytest.fixture(scope="module")
def share_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """pykafkad with the reference Kafka's settings (and its share.version, 2, a new cluster's)."""
    broker = BrokerProcess(tmp_path_factory.mktemp("share-groups") / "logs", REFERENCE_OVERRIDES, name="share")
    broker.start()
    yield broker
    broker.close()


class ShareSession:
    def __init__(self, conn: RawConnection, group: str) -> None:
        self.conn, self.group = conn, group
        md = conn.request(3, 12, {"topics": [{"name": TOPIC, "topic_id": uuid.UUID(int=0)}],
                                  "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
        self.topic_id = md["topics"][0]["topic_id"]

    def heartbeat(self, **fields: Any) -> dict[str, Any]:
        body = {"group_id": self.group, "member_id": "", "member_epoch": 0, "rack_id": None,
                "subscribed_topic_names": None}
        body.update(fields)
        r = self.conn.request(SHARE_HEARTBEAT, 1, body)
        assignment = r["assignment"]
        return {"error": r["error_code"], "message": r["error_message"], "member": r["member_id"],
                "epoch": r["member_epoch"], "interval": r["heartbeat_interval_ms"],
                "assignment": None if assignment is None else sorted(
                    p for tp in assignment["topic_partitions"] for p in tp["partitions"]
                    if tp["topic_id"] == self.topic_id)}

    def join(self, member: str) -> dict[str, Any]:
        return self.heartbeat(member_id=member, subscribed_topic_names=[TOPIC])

    def describe(self) -> dict[str, Any]:
        d = self.conn.request(SHARE_DESCRIBE, 1, {"group_ids": [self.group],
                                                  "include_authorized_operations": False})["groups"][0]
        return {"error": d["error_code"], "message": d["error_message"], "state": d["group_state"],
                "assignor": d["assignor_name"],
                "members": sorted((m["member_id"], sorted(p for tp in m["assignment"]["topic_partitions"]
                                                          for p in tp["partitions"]).__len__())
                                  for m in d["members"])}

    def wait_for(self, what: str, members: dict[str, int], total: int) -> dict[str, int]:
        """Heartbeat each member (at its epoch) until their partitions add up to ``total`` with every
        member holding some; the members' epochs, updated."""
        deadline = time.monotonic() + WAIT_S
        held: dict[str, list[int]] = {}
        while True:
            for member, epoch in list(members.items()):
                # With its subscription: a full heartbeat is always answered with the assignment.
                r = self.heartbeat(member_id=member, member_epoch=epoch, subscribed_topic_names=[TOPIC])
                assert r["error"] == 0, (what, r)
                members[member] = r["epoch"]
                if r["assignment"] is not None:
                    held[member] = r["assignment"]
            if sum(len(held.get(m, [])) for m in members) >= total and all(held.get(m) for m in members):
                return members
            assert time.monotonic() < deadline, f"{what}: not assigned within {WAIT_S} s: {held}"
            time.sleep(0.2)


Steps = Callable[[ShareSession, Callable[[str, Any], None]], None]


def _run(broker: BrokerProcess, group: str, steps: Steps) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    with RawConnection(broker.port) as conn:
        existing = conn.request(3, 12, {"topics": [{"name": TOPIC, "topic_id": uuid.UUID(int=0)}],
                                        "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
        if existing["topics"][0]["error_code"] != 0:
            conn.create_topic(TOPIC, PARTITIONS)
            conn.wait_for_leader(TOPIC)
        _ready(conn, [group])
        steps(ShareSession(conn, group), lambda label, value: seen.append((label, value)))
    return seen


def _compare(pykafkad: BrokerProcess, kafka: BrokerProcess, steps: Steps) -> None:
    group = f"share-{uuid.uuid4().hex[:8]}"
    ours, theirs = _run(pykafkad, group, steps), _run(kafka, group, steps)
    for (label, mine), (_, reference) in zip(ours, theirs, strict=True):
        assert mine == reference, f"{label}: pykafkad {mine} != Kafka {reference}"


def _checks(s: ShareSession, see: Callable[[str, Any], None]) -> None:
    see("no member id", s.heartbeat(subscribed_topic_names=[TOPIC]))
    see("member id too long", s.heartbeat(member_id="m" * 37, subscribed_topic_names=[TOPIC]))
    see("no subscription on joining", s.heartbeat(member_id="m1"))
    see("empty subscription on joining", s.heartbeat(member_id="m1", subscribed_topic_names=[]))
    see("empty rack", s.heartbeat(member_id="m1", rack_id="", subscribed_topic_names=[TOPIC]))
    see("epoch -2", s.heartbeat(member_id="m1", member_epoch=-2))
    see("empty group id", s.heartbeat(group_id="", member_id="m1", subscribed_topic_names=[TOPIC]))
    see("leave, no group", s.heartbeat(member_id="m1", member_epoch=-1))
    see("heartbeat, no group", s.heartbeat(member_id="m1", member_epoch=3))
    see("describe, no group", s.describe())


def test_share_heartbeat_checks_answer_as_kafka(share_broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    _compare(share_broker, reference_kafka, _checks)


def _membership(s: ShareSession, see: Callable[[str, Any], None]) -> None:
    m1 = s.join("m1")
    see("m1 joins: an empty assignment first", {k: m1[k] for k in ("error", "message", "member", "assignment")})
    epochs = s.wait_for("m1 assigned", {"m1": m1["epoch"]}, PARTITIONS)
    see("m1 gets every partition", s.describe())
    m2 = s.join("m2")
    see("m2 joins", {k: m2[k] for k in ("error", "message", "member")})
    epochs = s.wait_for("m1 and m2 assigned", {**epochs, "m2": m2["epoch"]}, PARTITIONS)
    described = s.describe()
    see("m1 and m2 share the partitions", {**described, "members": sorted(n for _, n in described["members"])})
    m3, m4 = s.join("m3"), s.join("m4")
    see("m3 and m4 join", (m3["error"], m4["error"]))
    # Four members on three partitions: each partition shared by two, 2+2+1+1.
    s.wait_for("four members assigned", {**epochs, "m3": m3["epoch"], "m4": m4["epoch"]}, 2 * PARTITIONS)
    described = s.describe()
    see("four members on three partitions", {**described, "members": sorted(n for _, n in described["members"])})
    see("listed", [(g["group_type"], g["protocol_type"], g["group_state"]) for g in s.conn.request(
        16, 5, {"states_filter": [], "types_filter": []})["groups"] if g["group_id"] == s.group])
    consumer = s.conn.request(68, 1, {"group_id": s.group, "member_id": "c1", "member_epoch": 0,
                                      "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
                                      "subscribed_topic_names": [TOPIC], "subscribed_topic_regex": None,
                                      "server_assignor": None, "topic_partitions": []})
    see("a consumer-protocol member cannot join it", (consumer["error_code"], consumer["error_message"]))
    classic = s.conn.request(15, 6, {"groups": [s.group], "include_authorized_operations": False})["groups"][0]
    see("DescribeGroups", (classic["error_code"], classic["error_message"]))
    see("DeleteGroups while it has members",
        s.conn.request(42, 2, {"groups_names": [s.group]})["results"][0]["error_code"])
    fenced = s.heartbeat(member_id="m1", member_epoch=epochs["m1"] + 10)
    see("a greater epoch is fenced", (fenced["error"], fenced["message"]))
    for m in ("m1", "m2", "m3", "m4"):
        left = s.heartbeat(member_id=m, member_epoch=-1)
        see(f"{m} leaves", {k: left[k] for k in ("error", "member", "epoch", "assignment")})
    see("empty", {k: v for k, v in s.describe().items() if k != "members"})
    see("deleted", s.conn.request(42, 2, {"groups_names": [s.group]})["results"][0]["error_code"])
    see("gone", s.describe())


def test_share_group_membership_as_kafka(share_broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    _compare(share_broker, reference_kafka, _membership)


def test_share_version_gates_share_groups(tmp_path: Path) -> None:
    """A new pykafkad cluster has share.version 2, as a new Kafka 4.4 cluster; disabled with
    kafka-features.sh, the share APIs stay advertised and are refused, as Kafka's at level 0."""
    broker = BrokerProcess(tmp_path / "logs", REFERENCE_OVERRIDES, name="no-share").start()
    try:
        described = run_tool("kafka-features", ["--bootstrap-server", broker.bootstrap, "describe"]).stdout
        assert re.search(r"Feature: share.version\s.*FinalizedVersionLevel: 2\s", described), described
        run_tool("kafka-features", ["--bootstrap-server", broker.bootstrap, "disable", "--feature", "share.version"])
        with RawConnection(broker.port) as conn:
            _, versions = conn.api_versions()
            assert versions.get(SHARE_HEARTBEAT) == (1, 1) and versions.get(SHARE_DESCRIBE) == (1, 1)
            r = conn.request(SHARE_HEARTBEAT, 1, {"group_id": "g", "member_id": "m1", "member_epoch": 0,
                                                  "rack_id": None, "subscribed_topic_names": [TOPIC]})
            assert r["error_code"] == 35, r
            d = conn.request(SHARE_DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": False})
            assert d["groups"][0]["error_code"] == 35, d
            assert versions.get(SHARE_FETCH) == (1, 2) and versions.get(SHARE_ACKNOWLEDGE) == (1, 2)
            f = conn.request(SHARE_FETCH, 1, {"group_id": "g", "member_id": "m1", "share_session_epoch": 0,
                                              "max_wait_ms": 0, "min_bytes": 1, "max_records": 10, "batch_size": 10,
                                              "topics": [], "forgotten_topics_data": []})
            assert f["error_code"] == 35, f
            a = conn.request(SHARE_ACKNOWLEDGE, 1, {"group_id": "g", "member_id": "m1", "share_session_epoch": 1,
                                                    "topics": []})
            assert a["error_code"] == 35, a
    finally:
        broker.close()
