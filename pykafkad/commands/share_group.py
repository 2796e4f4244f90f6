"""``pykafkad group`` for share groups (KIP-932).  librdkafka's admin client knows no share groups,
so these go over the broker's own codec (``protocol_client``): ListGroups filtered to share groups,
ShareGroupDescribe, DescribeShareGroupOffsets and AlterShareGroupOffsets, each to the group's
coordinator.  They work against Apache Kafka 4.x as against pykafkad."""

from __future__ import annotations

import argparse
from typing import Any

from pykafkad.commands.connection import CommandError
from pykafkad.commands.protocol_client import ProtocolClient, error_name, with_client

LIST_GROUPS, FIND_COORDINATOR, SHARE_GROUP_DESCRIBE, DESCRIBE_OFFSETS, ALTER_OFFSETS = 16, 10, 77, 90, 91
GROUP_KEY = 0
GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP = 69, 68
SHARE = "share"


async def _coordinator(client: ProtocolClient, group: str) -> int:
    answer = await client.request(FIND_COORDINATOR, {"key_type": GROUP_KEY, "coordinator_keys": [group]})
    [found] = answer["coordinators"]
    if found["error_code"]:
        raise CommandError(f"find the coordinator of group {group}: {error_name(found['error_code'])}; "
                           f"try again once the cluster is up")
    return int(found["node_id"])


def share_groups(args: argparse.Namespace) -> dict[str, str]:
    """The share groups of the cluster with their states (ListGroups, asking each broker for the
    groups it coordinates); none from a broker that cannot filter groups by type."""
    async def body(client: ProtocolClient) -> dict[str, str]:
        found: dict[str, str] = {}
        for node in sorted(client.brokers):
            try:
                answer = await client.request(LIST_GROUPS, {"states_filter": [], "types_filter": [SHARE]}, node)
            except CommandError:
                continue
            found |= {g["group_id"]: g["group_state"].upper() for g in answer["groups"]
                      if g.get("group_type", SHARE) == SHARE}
        return found

    return with_client(args, body)


async def _describe(client: ProtocolClient, group: str) -> dict[str, Any] | None:
    node = await _coordinator(client, group)
    try:
        answer = await client.request(SHARE_GROUP_DESCRIBE, {"group_ids": [group],
                                                             "include_authorized_operations": False}, node)
    except CommandError:
        return None  # a broker without share groups
    [found] = answer["groups"]
    if found["error_code"] == GROUP_ID_NOT_FOUND:
        return None
    if found["error_code"]:
        raise CommandError(f"describe share group {group}: {error_name(found['error_code'])}")
    members = [{"member_id": m["member_id"], "client_id": m["client_id"], "host": m["client_host"],
                "assignment": sorted((tp["topic_name"], p) for tp in m["assignment"]["topic_partitions"]
                                     for p in tp["partitions"])}
               for m in found["members"]]
    return {"group": group, "type": SHARE, "state": found["group_state"].upper(), "coordinator": node,
            "protocol": found["assignor_name"], "members": members}


async def _offsets(client: ProtocolClient, group: str, node: int) -> list[dict[str, Any]]:
    answer = await client.request(DESCRIBE_OFFSETS, {"groups": [{"group_id": group, "topics": None}]}, node)
    [found] = answer["groups"]
    if found["error_code"]:
        raise CommandError(f"describe the offsets of share group {group}: {error_name(found['error_code'])}")
    return sorted(({"topic": t["topic_name"], "partition": p["partition_index"],
                    "start_offset": p["start_offset"], "lag": p["lag"] if p["lag"] >= 0 else None}
                   for t in found["topics"] for p in t["partitions"]),
                  key=lambda r: (r["topic"], r["partition"]))


def describe(args: argparse.Namespace, group: str) -> dict[str, Any] | None:
    """The share group as ShareGroupDescribe gives it, or None when ``group`` is not a share group."""
    async def body(client: ProtocolClient) -> dict[str, Any] | None:
        return await _describe(client, group)

    return with_client(args, body)


def offsets(args: argparse.Namespace, group: str) -> list[dict[str, Any]] | None:
    """Each share-partition's start offset and lag (DescribeShareGroupOffsets), or None when ``group``
    is not a share group; one connection to the cluster for both questions."""
    async def body(client: ProtocolClient) -> list[dict[str, Any]] | None:
        found = await _describe(client, group)
        return None if found is None else await _offsets(client, group, found["coordinator"])

    return with_client(args, body)


def alter(args: argparse.Namespace, group: str, targets: dict[tuple[str, int], int], execute: bool) -> bool:
    """Whether ``group`` is a share group; if it is and ``execute``, set its start offsets
    (AlterShareGroupOffsets; the group must have no members)."""
    async def body(client: ProtocolClient) -> bool:
        found = await _describe(client, group)
        if found is None or not execute:
            return found is not None
        node = found["coordinator"]
        topics: dict[str, list[dict[str, int]]] = {}
        for (topic, partition), offset in sorted(targets.items()):
            topics.setdefault(topic, []).append({"partition_index": partition, "start_offset": offset})
        answer = await client.request(ALTER_OFFSETS, {"group_id": group, "topics": [
            {"topic_name": t, "partitions": ps} for t, ps in topics.items()]}, node)
        if answer["error_code"] == NON_EMPTY_GROUP:
            raise CommandError(f"reset the offsets of share group {group}: NON_EMPTY_GROUP: stop its consumers "
                               f"first (`pykafkad group describe {group}` lists them)")
        if answer["error_code"]:
            raise CommandError(f"reset the offsets of share group {group}: {error_name(answer['error_code'])}")
        for topic in answer["responses"]:
            for p in topic["partitions"]:
                if p["error_code"]:
                    raise CommandError(f"reset {topic['topic_name']}-{p['partition_index']} of share group "
                                       f"{group}: {error_name(p['error_code'])}")
        return True

    return with_client(args, body)
