"""The JSON admin API on the HTTP listener, what the console and people's scripts read:

- ``/api/cluster``: the cluster id, the controller, the brokers with their racks and leader counts;
- ``/api/topics`` and ``/api/topics/<name>``: partitions with leader, replicas and ISR, and, for
  replicas this broker hosts, log start and end offsets, high watermark and size; configs;
- ``/api/groups`` and ``/api/groups/<id>``: the groups this broker coordinates, with members,
  their assigned partitions, and committed offsets and lag per partition (a share group's start
  offsets and lag instead of committed offsets);
- ``/api/logs?lines=N``: the broker's last log lines.

Read-only: changes go through the Kafka protocol, where authorization applies.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

from pykafkad.broker_logging import RECENT
from pykafkad.coordinator.group.consumer_group import CONSUMER_MEMBER_TYPE
from pykafkad.coordinator.group.consumer_protocol import CONSUMER_PROTOCOL_TYPE, assigned_partitions
from pykafkad.coordinator.group.requests import (
    DescribeConsumerGroup,
    DescribeGroup,
    DescribeShareGroup,
    FetchOffsets,
    GroupRequest,
    ListGroup,
)
from pykafkad.coordinator.group.share_group import SHARE_GROUP_TYPE

if TYPE_CHECKING:
    from pykafkad.broker import Broker


class NotFound(Exception):
    """The path names nothing (the message says what), answered 404."""


def cluster(broker: Broker) -> dict[str, Any]:
    md = broker.metadata
    leaders: dict[int, int] = {}
    for topic in md.topics.values():
        for p in topic.partitions:
            leaders[p.leader] = leaders.get(p.leader, 0) + 1
    return {"cluster_id": md.cluster_id, "controller_id": md.controller_id, "this_broker": broker.config.node_id,
            "brokers": [{"id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack,
                         "leaders": leaders.get(b.node_id, 0), "is_controller": b.node_id == md.controller_id}
                        for b in sorted(md.brokers.values(), key=lambda b: b.node_id)]}


def topics(broker: Broker) -> list[dict[str, Any]]:
    live = broker.metadata.brokers
    return [{"name": t.name, "topic_id": str(t.topic_id), "internal": t.internal, "partitions": len(t.partitions),
             "replication_factor": len(t.partitions[0].replicas) if t.partitions else 0,
             "under_replicated": sum(1 for p in t.partitions if len(p.isr) < len(p.replicas)),
             "offline": sum(1 for p in t.partitions if p.leader not in live)}
            for t in sorted(broker.metadata.topics.values(), key=lambda t: t.name)]


def topic(broker: Broker, name: str) -> dict[str, Any]:
    info = broker.topic(name)
    if info is None:
        raise NotFound(f"topic {name} does not exist")
    partitions = []
    for p in info.partitions:
        entry: dict[str, Any] = {"partition": p.index, "leader": p.leader, "leader_epoch": p.leader_epoch,
                                 "replicas": p.replicas, "isr": p.isr,
                                 "offline_replicas": [r for r in p.replicas if r not in broker.metadata.brokers],
                                 "log_start_offset": None, "log_end_offset": None, "high_watermark": None,
                                 "size_bytes": None}
        replica = broker.replicas.get(name, p.index)
        if replica is not None:
            entry.update(log_start_offset=replica.log.log_start_offset, log_end_offset=replica.log_end_offset,
                         high_watermark=replica.high_watermark, size_bytes=replica.log.size_bytes())
        partitions.append(entry)
    return {"name": info.name, "topic_id": str(info.topic_id), "internal": info.internal,
            "configs": dict(sorted(info.configs.items())), "partitions": partitions}


async def groups(broker: Broker) -> list[dict[str, Any]]:
    listed = []
    for group_id in sorted(broker.groups.group_ids()):
        entry = await broker.groups.call(group_id, ListGroup())
        if entry:
            ask: GroupRequest = (DescribeConsumerGroup() if entry["group_type"] == "consumer"
                                 else DescribeShareGroup() if entry["group_type"] == SHARE_GROUP_TYPE
                                 else DescribeGroup())
            described = await broker.groups.call(group_id, ask)
            listed.append({"group_id": group_id, "state": entry["group_state"], "type": entry["group_type"],
                           "protocol_type": entry["protocol_type"], "members": len(described["members"])})
    return listed


def _partitions(assignment: dict[str, Any]) -> dict[str, list[int]]:
    return {tp["topic_name"]: sorted(tp["partitions"]) for tp in assignment["topic_partitions"]}


async def _members(broker: Broker, group_id: str, listed: dict[str, Any]) -> dict[str, Any]:
    """The group's state and members, from the protocol it speaks (KIP-848 groups carry epochs and
    a target assignment as well)."""
    if listed.get("group_type") == "consumer":
        d = await broker.groups.call(group_id, DescribeConsumerGroup())
        members = [{"member_id": m["member_id"], "group_instance_id": m["instance_id"], "client_id": m["client_id"],
                    "client_host": m["client_host"], "member_epoch": m["member_epoch"],
                    # A mixed group's members speak either protocol (KIP-848's migration).
                    "protocol": "consumer" if m["member_type"] == CONSUMER_MEMBER_TYPE else "classic",
                    "assignment": _partitions(m["assignment"]),
                    "target_assignment": _partitions(m["target_assignment"])}
                   for m in d["members"]]
        return {"state": d["group_state"], "type": "consumer", "protocol_type": CONSUMER_PROTOCOL_TYPE,
                "protocol": d["assignor_name"], "group_epoch": d["group_epoch"],
                "assignment_epoch": d["assignment_epoch"], "members": members}
    if listed.get("group_type") == SHARE_GROUP_TYPE:
        d = await broker.groups.call(group_id, DescribeShareGroup())
        members = [{"member_id": m["member_id"], "group_instance_id": None, "client_id": m["client_id"],
                    "client_host": m["client_host"], "member_epoch": m["member_epoch"], "protocol": SHARE_GROUP_TYPE,
                    "assignment": _partitions(m["assignment"])}
                   for m in d["members"]]
        return {"state": d["group_state"], "type": SHARE_GROUP_TYPE, "protocol_type": SHARE_GROUP_TYPE,
                "protocol": d["assignor_name"], "group_epoch": d["group_epoch"],
                "assignment_epoch": d["assignment_epoch"], "members": members}
    described = await broker.groups.call(group_id, DescribeGroup())
    consumer = described["protocol_type"] == CONSUMER_PROTOCOL_TYPE
    members = [{"member_id": m["member_id"], "group_instance_id": m["group_instance_id"],
                "client_id": m["client_id"], "client_host": m["client_host"],
                "assignment": assigned_partitions(m["member_assignment"]) if consumer else {}}
               for m in described["members"]]
    return {"state": described["group_state"], "type": "classic", "protocol_type": described["protocol_type"],
            "protocol": described["protocol_data"], "members": members}


async def group(broker: Broker, group_id: str) -> dict[str, Any]:
    if group_id not in broker.groups.group_ids():
        raise NotFound(f"group {group_id} is not coordinated by broker {broker.config.node_id}")
    described = await _members(broker, group_id, await broker.groups.call(group_id, ListGroup()))
    members = described["members"]
    owner = {(t, p): m["member_id"] for m in members for t, ps in m["assignment"].items() for p in ps}
    if described["type"] == SHARE_GROUP_TYPE:
        # Members share partitions: a partition's members are all named.
        sharing: dict[tuple[str, int], list[str]] = {}
        for m in members:
            for t, ps in m["assignment"].items():
                for p in ps:
                    sharing.setdefault((t, p), []).append(m["member_id"])
        shares = [{"topic": t, "partition": p, "start_offset": o.start_offset, "committed_offset": None,
                   "high_watermark": None, "lag": o.lag if o.lag >= 0 else None,
                   "member_id": ", ".join(sharing.get((t, p), []))}
                  for t, p, o in await broker.share_group_offsets.of_group(group_id)]
        return {"group_id": group_id, **described, "offsets": shares}
    fetched = await broker.groups.call(group_id, FetchOffsets())
    offsets = []
    for t in fetched.get("topics", []):
        for p in t["partitions"]:
            replica = broker.replicas.get(t["name"], p["partition_index"])
            hw = replica.high_watermark if replica is not None else None
            committed = p["committed_offset"]
            offsets.append({"topic": t["name"], "partition": p["partition_index"], "committed_offset": committed,
                            "high_watermark": hw, "lag": max(0, hw - committed) if hw is not None and committed >= 0
                            else None, "member_id": owner.get((t["name"], p["partition_index"]))})
    return {"group_id": group_id, **described, "offsets": offsets}


def logs(query: str) -> list[dict[str, str]]:
    wanted = urllib.parse.parse_qs(query).get("lines", ["100"])[0]
    count = int(wanted) if wanted.isascii() and wanted.isdigit() else 100
    return list(RECENT.lines)[-count:] if count > 0 else []


async def answer(broker: Broker, path: str, query: str) -> Any:
    """The JSON for an ``/api/...`` path; NotFound for any other."""
    parts = [p for p in path.removeprefix("/api/").split("/") if p]  # the ASGI path is already decoded
    match parts:
        case ["cluster"]:
            return cluster(broker)
        case ["topics"]:
            return topics(broker)
        case ["topics", name]:
            return topic(broker, name)
        case ["groups"]:
            return await groups(broker)
        case ["groups", group_id]:
            return await group(broker, group_id)
        case ["logs"]:
            return logs(query)
    raise NotFound(f"no such API: {path} (try /api/cluster, /api/topics, /api/groups, /api/logs)")
