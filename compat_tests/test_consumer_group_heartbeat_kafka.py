"""ConsumerGroupHeartbeat (KIP-848) answered as Apache Kafka 4.4.0 answers it.

The same sequences of raw heartbeats go to pykafkad and to the reference Kafka 4.4.0, both with
``group.consumer.assignment.interval.ms=0`` (a target assignment on the heartbeat that needs one, not
batched by the clock), and every answer is compared: error codes and messages, member and group
epochs, which partitions each member is given, what ConsumerGroupDescribe, DescribeGroups,
ListGroups, OffsetCommit, OffsetFetch and DeleteGroups say along the way.  Topic ids are replaced by
topic names, since each broker makes up its own.

The sequences cover: the request checks and their messages; joins and leaves; a member that must
revoke partitions before another gets them, and the epochs both go through; fenced epochs (greater,
smaller, the previous epoch accepted with a subset); static members leaving (-2) and coming back
under a new member id; an unknown member and group; the range assignor; commits and fetches with
stale member epochs; a non-empty group that cannot be deleted.
"""

from __future__ import annotations

import struct
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.broker_process import BrokerProcess
from compat_tests.conftest import REFERENCE_OVERRIDES
from compat_tests.raw_kafka import RawConnection
from pykafkad.coordinator.group.consumer_protocol import assigned_partitions, encode_assignment

HEARTBEAT, DESCRIBE, FIND_COORDINATOR, METADATA = 68, 69, 10, 3
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_COMMIT, OFFSET_FETCH = 15, 16, 42, 8, 9
READY_TIMEOUT_S = 60.0
NOT_READY = (14, 15, 16)  # load in progress, not available, not coordinator


@pytest.fixture(scope="module")
def consumer_protocol_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """pykafkad with the reference Kafka's settings (its assignment interval 0 included)."""
    path: Path = tmp_path_factory.mktemp("consumer-protocol") / "logs"
    broker = BrokerProcess(path, REFERENCE_OVERRIDES, name="consumer-protocol")
    broker.start()
    yield broker
    broker.close()


class Session:
    """Raw requests to one broker, with its topic ids shown as names."""

    def __init__(self, conn: RawConnection, group: str) -> None:
        self.conn = conn
        self.group = group
        self.names: dict[uuid.UUID, str] = {}
        self.ids: dict[str, uuid.UUID] = {}

    def learn(self, topic: str) -> None:
        md = self.conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                              "allow_auto_topic_creation": False,
                                              "include_topic_authorized_operations": False})
        topic_id = md["topics"][0]["topic_id"]
        self.names[topic_id] = topic
        self.ids[topic] = topic_id

    def named(self, topic_partitions: list[dict[str, Any]] | None) -> dict[str, list[int]] | None:
        if topic_partitions is None:
            return None
        return {self.names.get(tp["topic_id"], "?"): sorted(tp["partitions"]) for tp in topic_partitions
                if tp["partitions"]}

    def owned(self, owned: dict[str, list[int]] | None) -> list[dict[str, Any]] | None:
        if owned is None:
            return None
        return [{"topic_id": self.ids[t], "partitions": ps} for t, ps in owned.items()]

    def heartbeat(self, version: int = 1, owned: dict[str, list[int]] | None = None, **fields: Any) -> dict[str, Any]:
        body = {"group_id": self.group, "member_id": "", "member_epoch": 0, "instance_id": None, "rack_id": None,
                "rebalance_timeout_ms": -1, "subscribed_topic_names": None, "subscribed_topic_regex": None,
                "server_assignor": None, "topic_partitions": self.owned(owned)}
        body.update(fields)
        r = self.conn.request(HEARTBEAT, version, body)
        assignment = r["assignment"]
        return {"error": r["error_code"], "message": r["error_message"],
                "member": r["member_id"] if version >= 1 else bool(r["member_id"]),
                "epoch": r["member_epoch"], "interval": r["heartbeat_interval_ms"],
                "assignment": None if assignment is None else self.named(assignment["topic_partitions"])}

    def join(self, member: str, topics: list[str], **fields: Any) -> dict[str, Any]:
        return self.heartbeat(member_id=member, rebalance_timeout_ms=30000, subscribed_topic_names=topics, owned={},
                              **fields)

    def describe(self, group: str | None = None) -> dict[str, Any]:
        d = self.conn.request(DESCRIBE, 1, {"group_ids": [group or self.group],
                                            "include_authorized_operations": False})["groups"][0]
        members = sorted((m["member_id"], m["member_epoch"], m["instance_id"],
                          self.named(m["assignment"]["topic_partitions"]),
                          self.named(m["target_assignment"]["topic_partitions"]), m["member_type"],
                          sorted(m["subscribed_topic_names"])) for m in d["members"])
        return {"error": d["error_code"], "message": d["error_message"], "state": d["group_state"],
                "group_epoch": d["group_epoch"], "assignment_epoch": d["assignment_epoch"],
                "assignor": d["assignor_name"], "members": members}

    def commit(self, member: str, epoch: int, version: int = 9, topic: str = "cg-t") -> int:
        r = self.conn.request(OFFSET_COMMIT, version, {
            "group_id": self.group, "generation_id_or_member_epoch": epoch, "member_id": member,
            "group_instance_id": None, "retention_time_ms": -1, "topics": [{
                "name": topic, "topic_id": self.ids[topic], "partitions": [{
                    "partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                    "committed_metadata": None}]}]})
        return r["topics"][0]["partitions"][0]["error_code"]

    def fetch(self, member: str | None, epoch: int) -> tuple[int, dict[str, Any]]:
        r = self.conn.request(OFFSET_FETCH, 9, {"groups": [{"group_id": self.group, "member_id": member,
                                                            "member_epoch": epoch, "topics": None}],
                                                "require_stable": False})
        group = r["groups"][0]
        offsets = {t["name"]: [(p["partition_index"], p["committed_offset"]) for p in t["partitions"]]
                   for t in group["topics"]}
        return group["error_code"], offsets


def _ready(conn: RawConnection, groups: list[str]) -> None:
    """Until each group's coordinator answers (Kafka loads its offsets partitions after start-up)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    for group in groups:
        while True:
            found = conn.request(FIND_COORDINATOR, 6, {"key_type": 0, "coordinator_keys": [group]})
            described = conn.request(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False})
            if found["coordinators"][0]["error_code"] == 0 and described["groups"][0]["error_code"] not in NOT_READY:
                break
            assert time.monotonic() < deadline, f"no coordinator for {group}: {found} {described}"
            time.sleep(0.2)


Steps = Callable[[Session, Callable[[str, Any], None]], None]


def _run(broker: BrokerProcess, group: str, steps: Steps) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    with RawConnection(broker.port) as conn:
        for topic, partitions in (("cg-t", 4), ("cg-u", 2)):
            existing = conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                                   "allow_auto_topic_creation": False,
                                                   "include_topic_authorized_operations": False})
            if existing["topics"][0]["error_code"] != 0:
                conn.create_topic(topic, partitions)
                conn.wait_for_leader(topic)
        _ready(conn, [group])
        session = Session(conn, group)
        session.learn("cg-t")
        session.learn("cg-u")
        steps(session, lambda label, value: seen.append((label, value)))
    return seen


def _compare(pykafkad: BrokerProcess, kafka: BrokerProcess, prefix: str, steps: Steps) -> None:
    group = f"{prefix}-{uuid.uuid4().hex[:8]}"
    ours = _run(pykafkad, group, steps)
    theirs = _run(kafka, group, steps)
    for (label, mine), (_, reference) in zip(ours, theirs, strict=True):
        assert mine == reference, f"{label}: pykafkad {mine} != Kafka {reference}"


def _checks(s: Session, see: Callable[[str, Any], None]) -> None:
    see("v1 without member id", s.heartbeat(rebalance_timeout_ms=30000, subscribed_topic_names=["cg-t"], owned={}))
    see("no rebalance timeout", s.heartbeat(member_id="m1", subscribed_topic_names=["cg-t"], owned={}))
    see("owned missing", s.heartbeat(member_id="m1", rebalance_timeout_ms=30000, subscribed_topic_names=["cg-t"]))
    see("owned not empty", s.heartbeat(member_id="m1", rebalance_timeout_ms=30000, subscribed_topic_names=["cg-t"],
                                       owned={"cg-t": [0]}))
    see("no subscription", s.heartbeat(member_id="m1", rebalance_timeout_ms=30000, owned={}))
    see("epoch -3", s.heartbeat(member_id="m1", member_epoch=-3))
    see("unknown assignor", s.join("m1", ["cg-t"], server_assignor="sticky"))
    see("empty instance id", s.join("m1", ["cg-t"], instance_id=""))
    see("empty rack id", s.join("m1", ["cg-t"], rack_id=""))
    see("static leave without instance", s.heartbeat(member_id="m1", member_epoch=-2))
    see("leave without member id", s.heartbeat(member_epoch=-1))
    see("heartbeat to no group", s.heartbeat(member_id="m1", member_epoch=3))
    see("describe no group", s.describe())
    see("v0 join gets a member id", s.heartbeat(version=0, rebalance_timeout_ms=30000,
                                                subscribed_topic_names=["cg-t"], owned={}))
    see("unknown member", s.heartbeat(member_id="nobody", member_epoch=2))
    see("unknown member leaves", s.heartbeat(member_id="nobody", member_epoch=-1))
    see("empty group id", s.heartbeat(group_id="", member_id="m1", rebalance_timeout_ms=30000,
                                      subscribed_topic_names=["cg-t"], owned={}))


def test_heartbeat_checks_answer_as_kafka(consumer_protocol_broker: BrokerProcess,
                                          reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "checks", _checks)


def _revocation(s: Session, see: Callable[[str, Any], None]) -> None:
    m1 = s.join("m1", ["cg-t", "cg-missing"])
    see("m1 joins", m1)
    see("describe", s.describe())
    e1 = m1["epoch"]
    see("m1 heartbeats", s.heartbeat(member_id="m1", member_epoch=e1))
    see("m1 full heartbeat", s.heartbeat(member_id="m1", member_epoch=e1, rebalance_timeout_ms=30000,
                                         subscribed_topic_names=["cg-t", "cg-missing"], owned=m1["assignment"]))
    m2 = s.join("m2", ["cg-t"])
    see("m2 joins: nothing free yet", m2)
    see("describe while m1 must revoke", s.describe())
    see("m1 told to revoke", s.heartbeat(member_id="m1", member_epoch=e1))
    see("m1 still owns all", s.heartbeat(member_id="m1", member_epoch=e1, owned={"cg-t": [0, 1, 2, 3]}))
    see("m2 waits", s.heartbeat(member_id="m2", member_epoch=m2["epoch"]))
    kept = s.describe()["members"][0][4]
    revoked = s.heartbeat(member_id="m1", member_epoch=e1, owned=kept)
    see("m1 revoked", revoked)
    see("describe after revocation", s.describe())
    see("m2 old epoch, nothing reported", s.heartbeat(member_id="m2", member_epoch=m2["epoch"]))
    m2_now = s.heartbeat(member_id="m2", member_epoch=m2["epoch"], owned={})
    see("m2 old epoch with its partitions", m2_now)
    see("m2 at a greater epoch", s.heartbeat(member_id="m2", member_epoch=m2_now["epoch"] + 5))
    see("m1 at its old epoch", s.heartbeat(member_id="m1", member_epoch=e1))
    see("describe stable", s.describe())
    for version in (5, 6):
        described = s.conn.request(DESCRIBE_GROUPS, version, {"groups": [s.group],
                                                              "include_authorized_operations": False})
        see(f"classic describe v{version}", described["groups"][0])
    listed = s.conn.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["consumer"]})["groups"]
    see("listed as a consumer group", [g for g in listed if g["group_id"] == s.group])
    see("commit at a stale epoch", s.commit("m2", m2["epoch"]))
    see("commit by an unknown member", s.commit("nobody", 1))
    see("commit without a member", s.commit("", -1))
    see("commit at the member's epoch", s.commit("m2", m2_now["epoch"]))
    see("fetch at a stale epoch", s.fetch("m2", 0))
    see("fetch by an unknown member", s.fetch("nobody", 3))
    see("fetch at the member's epoch", s.fetch("m2", m2_now["epoch"]))
    see("fetch without a member", s.fetch(None, -1))
    see("delete while members are in", s.conn.request(DELETE_GROUPS, 2, {"groups_names": [s.group]})["results"])
    see("m1 at the new epoch", s.heartbeat(member_id="m1", member_epoch=m2_now["epoch"]))
    see("m1 leaves", s.heartbeat(member_id="m1", member_epoch=-1))
    see("m1 leaves again", s.heartbeat(member_id="m1", member_epoch=-1))
    see("m2 takes all", s.heartbeat(member_id="m2", member_epoch=m2_now["epoch"]))
    see("describe after m1 left", s.describe())
    see("m2 leaves", s.heartbeat(member_id="m2", member_epoch=-1))
    see("describe empty", s.describe())
    see("delete empty", s.conn.request(DELETE_GROUPS, 2, {"groups_names": [s.group]})["results"])
    see("describe deleted", s.describe())


def test_revocation_before_assignment_as_kafka(consumer_protocol_broker: BrokerProcess,
                                               reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "revoke", _revocation)


def _static_and_range(s: Session, see: Callable[[str, Any], None]) -> None:
    a = s.join("a", ["cg-t", "cg-u"], instance_id="i-a", server_assignor="range")
    see("a joins (range)", a)
    b = s.join("b", ["cg-t", "cg-u"], instance_id="i-b", server_assignor="range")
    see("b joins (range)", b)
    see("a told to revoke", s.heartbeat(member_id="a", member_epoch=a["epoch"], instance_id="i-a"))
    see("describe", s.describe())
    see("c takes b's instance id", s.join("c", ["cg-t"], instance_id="i-b"))
    see("a with b's instance id", s.heartbeat(member_id="a", member_epoch=a["epoch"], instance_id="i-b"))
    see("b leaves for a while", s.heartbeat(member_id="b", member_epoch=-2, instance_id="i-b"))
    see("describe with b away", s.describe())
    see("c comes back as i-b", s.join("c", ["cg-t", "cg-u"], instance_id="i-b", server_assignor="range"))
    see("describe with c", s.describe())
    see("c leaves for good", s.heartbeat(member_id="c", member_epoch=-1, instance_id="i-b"))
    see("describe after c", s.describe())


def test_static_members_and_range_assignor_as_kafka(consumer_protocol_broker: BrokerProcess,
                                                    reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "static", _static_and_range)


def _group_config(s: Session, value: str | None) -> int:
    """IncrementalAlterConfigs on the GROUP resource (type 32): set (or delete) its heartbeat interval."""
    operation = {"config_operation": 0, "value": value} if value is not None else {"config_operation": 1,
                                                                                     "value": None}
    r = s.conn.request(44, 1, {"resources": [{"resource_type": 32, "resource_name": s.group, "configs": [
        {"name": "consumer.heartbeat.interval.ms", **operation}]}], "validate_only": False})
    error = r["responses"][0]["error_code"]
    if error == 0:
        _wait_group_config(s, value if value is not None else BROKER_HEARTBEAT_INTERVAL)
    return error


BROKER_HEARTBEAT_INTERVAL = "5000"


def _wait_group_config(s: Session, value: str) -> None:
    """Until DescribeConfigs shows the group's new interval.

    Both brokers apply a group config after answering the alter (Kafka once its broker replays the
    controller's record), so a heartbeat sent at once may still see the old one: that race is not what
    the comparison is about.
    """
    deadline = time.monotonic() + 30
    while True:
        r = s.conn.request(32, 4, {"resources": [{"resource_type": 32, "resource_name": s.group,
                                                  "configuration_keys": ["consumer.heartbeat.interval.ms"]}],
                                   "include_synonyms": False, "include_documentation": False})
        seen = [c["value"] for c in r["results"][0]["configs"] if c["name"] == "consumer.heartbeat.interval.ms"]
        if seen == [value]:
            return
        assert time.monotonic() < deadline, f"group config {value} not described within 30 s: {r}"
        time.sleep(0.05)


def _group_configs(s: Session, see: Callable[[str, Any], None]) -> None:
    see("set the group's heartbeat interval", _group_config(s, "7000"))
    m1 = s.join("m1", ["cg-t"])
    see("joining gets the group's interval", m1)
    see("out of the broker's bounds", _group_config(s, "1000"))
    see("deleted", _group_config(s, None))
    see("the broker's interval again", s.heartbeat(member_id="m1", member_epoch=m1["epoch"]))


def test_group_configs_set_the_heartbeat_interval_as_kafka(consumer_protocol_broker: BrokerProcess,
                                                           reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "configs", _group_configs)


# -- a mixed group: classic members in a consumer-protocol group (KIP-848's online migration) --------

JOIN_GROUP, SYNC_GROUP, CLASSIC_HEARTBEAT = 11, 14, 12


def _subscription(topics: list[str], owned: dict[str, list[int]]) -> bytes:
    """A ConsumerProtocolSubscription v1, as a cooperative Java consumer sends it."""
    out = struct.pack(">hi", 1, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    out += struct.pack(">ii", -1, len(owned))
    for t, ps in owned.items():
        out += struct.pack(">h", len(t)) + t.encode() + struct.pack(f">i{len(ps)}i", len(ps), *ps)
    return out


class Classic:
    """A classic member of ``s``'s group, speaking raw JoinGroup, SyncGroup and Heartbeat; the member
    ids the broker makes up are shown as the member's name."""

    def __init__(self, s: Session, name: str, ids: dict[str, str], instance_id: str | None = None) -> None:
        self.s, self.name, self.ids, self.instance_id = s, name, ids, instance_id
        self.member_id = ""
        self.generation = -1

    def _shown(self, member_id: str) -> str:
        return self.ids.get(member_id, "?" if member_id else "")

    def join(self, owned: dict[str, list[int]] | None = None,
             protocols: tuple[str, ...] = ("cooperative-sticky",)) -> dict[str, Any]:
        metadata = _subscription(["cg-t"], owned or {})
        r = self.s.conn.request(JOIN_GROUP, 9, {
            "group_id": self.s.group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000,
            "member_id": self.member_id, "group_instance_id": self.instance_id, "protocol_type": "consumer",
            "protocols": [{"name": p, "metadata": metadata} for p in protocols], "reason": None})
        if r["member_id"]:
            self.member_id = r["member_id"]
            self.ids.setdefault(r["member_id"], self.name)
        if r["error_code"] == 0:
            self.generation = r["generation_id"]
        return {"error": r["error_code"], "member": self._shown(r["member_id"]), "generation": r["generation_id"],
                "protocol": (r["protocol_type"], r["protocol_name"]), "leader": self._shown(r["leader"]),
                "skip": r["skip_assignment"], "members": sorted(self._shown(m["member_id"]) for m in r["members"])}

    def sync(self, assignments: dict[str, bytes] | None = None) -> dict[str, Any]:
        by_id = {i: n for i, n in self.ids.items()}
        r = self.s.conn.request(SYNC_GROUP, 5, {
            "group_id": self.s.group, "generation_id": self.generation, "member_id": self.member_id,
            "group_instance_id": self.instance_id, "protocol_type": "consumer", "protocol_name": "cooperative-sticky",
            "assignments": [{"member_id": next(i for i, n in by_id.items() if n == name), "assignment": a}
                            for name, a in (assignments or {}).items()]})
        return {"error": r["error_code"], "protocol": (r["protocol_type"], r["protocol_name"]),
                "assignment": assigned_partitions(r["assignment"]) if r["assignment"] else None}

    def heartbeat(self) -> int:
        return self.s.conn.request(CLASSIC_HEARTBEAT, 4, {
            "group_id": self.s.group, "generation_id": self.generation, "member_id": self.member_id,
            "group_instance_id": self.instance_id})["error_code"]

    def commit(self, generation: int | None = None) -> int:
        r = self.s.conn.request(OFFSET_COMMIT, 8, {
            "group_id": self.s.group, "generation_id_or_member_epoch": generation if generation is not None
            else self.generation, "member_id": self.member_id, "group_instance_id": None,
            "retention_time_ms": -1, "topics": [{"name": "cg-t", "topic_id": uuid.UUID(int=0), "partitions": [
                {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                 "committed_metadata": None}]}]})
        return r["topics"][0]["partitions"][0]["error_code"]


def _described(s: Session, ids: dict[str, str], sizes: bool = False) -> dict[str, Any]:
    """ConsumerGroupDescribe with made-up member ids shown by name (``sizes``: only how many
    partitions the members have and are to have, as which member gives one up depends on how the
    made-up ids hash)."""
    d = s.describe()
    d["members"] = sorted((ids.get(m[0], m[0]), *m[1:]) for m in d["members"])
    if sizes:
        d["members"] = sorted((sum(map(len, m[3].values())), sum(map(len, m[4].values()))) for m in d["members"])
    return d


def _listed_type(s: Session) -> list[tuple[str, str]]:
    listed = s.conn.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})["groups"]
    return [(g["group_type"], g["protocol_type"]) for g in listed if g["group_id"] == s.group]


def _classic_described(s: Session, ids: dict[str, str]) -> dict[str, Any]:
    d = s.conn.request(DESCRIBE_GROUPS, 5, {"groups": [s.group], "include_authorized_operations": False})
    g = d["groups"][0]
    return {"error": g["error_code"], "state": g["group_state"], "protocol": (g["protocol_type"], g["protocol_data"]),
            "members": sorted(ids.get(m["member_id"], "?") for m in g["members"])}


def _mixed_group(s: Session, see: Callable[[str, Any], None]) -> None:
    ids: dict[str, str] = {}
    c1 = Classic(s, "c1", ids)
    see("c1 asked for a member id", c1.join())
    see("c1 joins the classic group as its leader", c1.join())
    everything = {"cg-t": [0, 1, 2, 3]}
    see("c1 syncs with every partition", c1.sync({"c1": encode_assignment(everything, 1)}))
    see("a classic group", _listed_type(s))

    m1 = s.join("m1", ["cg-t"])
    ids["m1"] = "m1"
    see("m1 joins with the consumer protocol: the group upgrades", m1)
    see("a consumer group now", _listed_type(s))
    see("described with both members", _described(s, ids))
    see("DescribeGroups no longer describes it", _classic_described(s, ids))
    see("c1 told to rejoin", c1.heartbeat())
    see("c1's commit at its generation", c1.commit())
    see("c1's commit at another generation", c1.commit(generation=c1.generation + 5))
    see("c1 rejoins still owning everything", c1.join(owned=everything))
    see("c1 syncs: what it keeps", c1.sync())
    see("c1's heartbeat while revoking", c1.heartbeat())
    kept = {"cg-t": [p for p in range(4) if p in (c1.sync()["assignment"] or {}).get("cg-t", [])]}
    see("c1 rejoins having revoked", c1.join(owned=kept))
    see("c1 syncs at its new epoch", c1.sync())
    see("c1 stable", c1.heartbeat())
    m1_now = s.heartbeat(member_id="m1", member_epoch=m1["epoch"], owned={})
    see("m1 gets the partitions c1 released", m1_now)
    see("described settled", _described(s, ids))

    c2 = Classic(s, "c2", ids)
    see("a classic member with a protocol the others lack", c2.join(protocols=("range",)))
    see("c2 joins", c2.join())
    see("c2 joins with its id", c2.join())
    see("c2 syncs", c2.sync())
    see("c2 leaves", s.conn.request(13, 4, {"group_id": s.group, "members": [
        {"member_id": c2.member_id, "group_instance_id": None, "reason": None}]})["members"][0]["error_code"])
    see("described after c2 left", _described(s, ids, sizes=True))

    see("m1 leaves: the group downgrades", s.heartbeat(member_id="m1", member_epoch=-1))
    see("a classic group again", _listed_type(s))
    see("DescribeGroups describes it", _classic_described(s, ids))
    see("ConsumerGroupDescribe no longer does", s.describe()["error"])
    see("c1 told to rejoin the classic group", c1.heartbeat())
    see("c1 rejoins: a new generation", c1.join(owned=kept))
    see("c1 syncs as the leader", c1.sync({"c1": encode_assignment(everything, 1)}))
    see("stable", _classic_described(s, ids))


def test_a_mixed_group_answers_as_kafka(consumer_protocol_broker: BrokerProcess,
                                        reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "mixed", _mixed_group)


def _static_replacement(s: Session, see: Callable[[str, Any], None]) -> None:
    """The last consumer-protocol member is static; a classic member restarted with its instance id
    takes its place, and the group, now all classic, turns classic at once."""
    ids: dict[str, str] = {"m1": "m1"}
    m1 = s.join("m1", ["cg-t"], instance_id="i1")
    see("static m1 joins a new consumer group", m1)
    c1 = Classic(s, "c1", ids)
    c1.join()
    see("classic c1 joins the consumer group", c1.join())
    see("c1 syncs", c1.sync())
    told = s.heartbeat(member_id="m1", member_epoch=m1["epoch"], instance_id="i1")
    see("m1 told to revoke", told)
    revoked = s.heartbeat(member_id="m1", member_epoch=m1["epoch"], instance_id="i1",
                          owned=told["assignment"] or {})
    see("m1 revoked", revoked)
    see("c1 rejoins", c1.join())
    see("c1 syncs its partitions", c1.sync())
    see("described", _described(s, ids, sizes=True))
    c2 = Classic(s, "c2", ids, instance_id="i1")
    see("classic c2 takes m1's instance id: the group downgrades", c2.join())
    see("a classic group", _listed_type(s))
    see("DescribeGroups", _classic_described(s, ids))
    see("c2 syncs: m1's partitions", c2.sync())
    see("c1's heartbeat", c1.heartbeat())
    see("c2's heartbeat", c2.heartbeat())
    see("m1 fenced", s.heartbeat(member_id="m1", member_epoch=revoked["epoch"], instance_id="i1")["error"])


def test_a_static_classic_member_replacing_the_last_consumer_member_as_kafka(
        consumer_protocol_broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "static-mixed", _static_replacement)


def _static_upgrade(s: Session, see: Callable[[str, Any], None]) -> None:
    """A classic static member restarted with the consumer protocol takes its own place back."""
    ids: dict[str, str] = {"m1": "m1", "m2": "m2"}
    m1 = s.join("m1", ["cg-t"])
    see("m1 joins", m1)
    c1 = Classic(s, "c1", ids, instance_id="i2")
    see("static classic c1 joins", c1.join())
    see("c1 syncs", c1.sync())
    told = s.heartbeat(member_id="m1", member_epoch=m1["epoch"])
    revoked = s.heartbeat(member_id="m1", member_epoch=m1["epoch"], owned=told["assignment"] or {})
    see("m1 revoked", revoked["epoch"])
    see("c1 rejoins", c1.join())
    see("described", _described(s, ids, sizes=True))
    m2 = s.join("m2", ["cg-t"], instance_id="i2")
    see("m2 takes c1's instance id with the consumer protocol", {**m2, "assignment": len(m2["assignment"] or {})})
    see("described with m2", sorted(m[5] for m in _described(s, ids)["members"]))
    see("c1's heartbeat", c1.heartbeat())


def test_a_static_classic_member_coming_back_with_the_consumer_protocol_as_kafka(
        consumer_protocol_broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "static-up", _static_upgrade)


def _rebalance_timeout(s: Session, see: Callable[[str, Any], None]) -> None:
    """A member that keeps heartbeating but never revokes what it is told to is fenced once its
    rebalance timeout passes, and the partitions go to the member waiting for them."""
    m1 = s.heartbeat(member_id="m1", rebalance_timeout_ms=2000, subscribed_topic_names=["cg-t"], owned={})
    see("m1 joins with a 2 s rebalance timeout", m1)
    m2 = s.join("m2", ["cg-t"])
    see("m2 joins", m2)
    see("m1 told to revoke", s.heartbeat(member_id="m1", member_epoch=m1["epoch"]))
    # m1 keeps its session alive and never revokes: its heartbeats are answered until it is fenced.
    deadline = time.monotonic() + 30
    while (held := s.heartbeat(member_id="m1", member_epoch=m1["epoch"],
                               owned={"cg-t": [0, 1, 2, 3]}))["error"] == 0:
        assert time.monotonic() < deadline, "m1 was not fenced within 30 s"
        time.sleep(0.2)
    see("m1 fenced", {k: held[k] for k in ("error", "message", "epoch")})
    see("m2 gets every partition", s.heartbeat(member_id="m2", member_epoch=m2["epoch"], owned={}))


def test_the_rebalance_timeout_fences_as_kafka(consumer_protocol_broker: BrokerProcess,
                                               reference_kafka: BrokerProcess) -> None:
    _compare(consumer_protocol_broker, reference_kafka, "rebalance-timeout", _rebalance_timeout)
