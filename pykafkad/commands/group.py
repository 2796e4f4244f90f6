"""``pykafkad group list|describe|lag|reset-offsets|delete``: consumer groups, their members and
assignments, committed offsets against the high watermarks, and moving or dropping them; share
groups alike (their start offsets and lag instead of committed offsets, through
``share_group.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import OffsetSpec
from rich.progress import Progress

from pykafkad.commands import share_group
from pykafkad.commands.connection import TIMEOUT_S, CommandError, admin, metadata, wait
from pykafkad.commands.output import Report


def list_groups(args: argparse.Namespace) -> Report:
    client = admin(args)
    listed = wait(client.list_consumer_groups(request_timeout=TIMEOUT_S), "list the groups")
    # librdkafka lists consumer groups only; share groups come from ListGroups itself.
    shares = share_group.share_groups(args)
    groups = sorted([{"group": g.group_id, "state": g.state.name if g.state is not None else None,
                      "type": "consumer" if g.is_simple_consumer_group is False else "simple"}
                     for g in listed.valid if g.group_id not in shares]
                    + [{"group": g, "state": state, "type": "share"} for g, state in shares.items()],
                    key=lambda g: g["group"])
    return Report(groups).table("", ["GROUP", "TYPE", "STATE"], [[g["group"], g["type"], g["state"]] for g in groups])


def _describe(client: Any, group: str) -> Any:
    return wait(client.describe_consumer_groups([group], request_timeout=TIMEOUT_S)[group], f"describe group {group}")


def _describe_share_group(found: dict[str, Any]) -> Report:
    members = found["members"]
    report = Report(found, lines=[f"group {found['group']}: {found['state']}, share group, coordinator "
                                  f"{found['coordinator']}, assignor {found['protocol']}, {len(members)} member(s)"])
    return report.table("MEMBERS", ["MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"],
                        [[m["member_id"], m["client_id"], m["host"], ", ".join(f"{t}-{p}" for t, p in m["assignment"])]
                         for m in members])


def describe(args: argparse.Namespace) -> Report:
    shared = share_group.describe(args, args.group)
    if shared is not None:
        return _describe_share_group(shared)
    client = admin(args)
    d = _describe(client, args.group)
    def partitions(assignment: Any) -> list[tuple[str, int]]:
        return sorted((tp.topic, tp.partition) for tp in (assignment.topic_partitions if assignment else []))

    # KIP-848 groups (type CONSUMER) also have a target assignment the members move towards.
    kind = d.type.name.lower() if getattr(d, "type", None) is not None else "classic"
    members = [{"member_id": m.member_id, "client_id": m.client_id, "host": m.host,
                "assignment": partitions(m.assignment),
                "target_assignment": partitions(getattr(m, "target_assignment", None))}
               for m in d.members]
    report = Report({"group": args.group, "type": kind, "state": d.state.name, "coordinator": d.coordinator.id,
                     "protocol": d.partition_assignor, "members": members},
                    lines=[f"group {args.group}: {d.state.name}, {kind} protocol, coordinator {d.coordinator.id}, "
                           f"assignor {d.partition_assignor or '-'}, {len(members)} member(s)"])
    columns = ["MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"] + (["TARGET"] if kind == "consumer" else [])
    rows = [[m["member_id"], m["client_id"], m["host"], ", ".join(f"{t}-{p}" for t, p in m["assignment"])]
            + ([", ".join(f"{t}-{p}" for t, p in m["target_assignment"])] if kind == "consumer" else [])
            for m in members]
    return report.table("MEMBERS", columns, rows)


def _committed(client: Any, group: str) -> list[TopicPartition]:
    listed = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT_S)
    result = wait(listed[group], f"fetch the offsets of group {group}")
    return sorted((tp for tp in result.topic_partitions if tp.offset >= 0), key=lambda tp: (tp.topic, tp.partition))


def _offsets(client: Any, partitions: list[TopicPartition], spec: OffsetSpec) -> dict[tuple[str, int], int]:
    if not partitions:
        return {}
    wanted = {TopicPartition(tp.topic, tp.partition): spec for tp in partitions}
    futures = client.list_offsets(wanted, request_timeout=TIMEOUT_S)
    return {(tp.topic, tp.partition): wait(f, f"list the offsets of {tp.topic}-{tp.partition}").offset
            for tp, f in futures.items()}


def _share_group_lag(args: argparse.Namespace, rows: list[dict[str, Any]]) -> Report:
    total = sum(r["lag"] or 0 for r in rows)
    report = Report({"group": args.group, "type": "share", "total_lag": total, "partitions": rows},
                    lines=[f"share group {args.group}: total lag {total} (records not yet delivered for good)"])
    return report.table("", ["TOPIC", "PARTITION", "START-OFFSET", "LAG"],
                        [[r["topic"], r["partition"], r["start_offset"], r["lag"]] for r in rows])


def lag(args: argparse.Namespace) -> Report:
    shared = share_group.offsets(args, args.group)
    if shared is not None:
        return _share_group_lag(args, shared)
    client = admin(args)
    committed = _committed(client, args.group)
    ends = _offsets(client, committed, OffsetSpec.latest())
    rows = [{"topic": tp.topic, "partition": tp.partition, "committed": tp.offset,
             "high_watermark": ends.get((tp.topic, tp.partition)),
             "lag": max(0, ends[(tp.topic, tp.partition)] - tp.offset) if (tp.topic, tp.partition) in ends else None}
            for tp in committed]
    total = sum(r["lag"] or 0 for r in rows)
    report = Report({"group": args.group, "total_lag": total, "partitions": rows},
                    lines=[f"group {args.group}: total lag {total}"])
    return report.table("", ["TOPIC", "PARTITION", "COMMITTED", "HIGH-WATERMARK", "LAG"],
                        [[r["topic"], r["partition"], r["committed"], r["high_watermark"], r["lag"]] for r in rows])


def reset_offsets(args: argparse.Namespace) -> Report:
    client = admin(args)
    topic = metadata(client, f"reset offsets on {args.topic}", args.topic).topics.get(args.topic)
    if topic is None or topic.error is not None or not topic.partitions:
        raise CommandError(f"reset offsets: no topic {args.topic}; list the topics with `pykafkad topic list`")
    partitions = [TopicPartition(args.topic, p) for p in sorted(topic.partitions)]
    if args.to_offset is not None:
        targets = {(tp.topic, tp.partition): args.to_offset for tp in partitions}
    else:
        targets = _offsets(client, partitions, OffsetSpec.earliest() if args.to_earliest else OffsetSpec.latest())
    rows = [{"topic": t, "partition": p, "new_offset": o} for (t, p), o in sorted(targets.items())]
    # A share group's start offsets move together, in one request (its members must be gone).
    shared = share_group.alter(args, args.group, targets, args.execute)
    if args.execute and not shared:
        # One partition at a time, so a long reset shows its progress and a failure names its partition.
        with Progress(transient=True, disable=args.json) as progress:
            task = progress.add_task(f"resetting {args.group}", total=len(rows))
            for r in rows:
                request = ConsumerGroupTopicPartitions(args.group, [TopicPartition(r["topic"], r["partition"],
                                                                                   r["new_offset"])])
                wait(client.alter_consumer_group_offsets([request])[args.group],
                     f"reset {r['topic']}-{r['partition']} of group {args.group}")
                progress.advance(task)
    note = "reset" if args.execute else "planned (add --execute to apply; stop the group's consumers first)"
    report = Report({"group": args.group, "executed": args.execute, "partitions": rows},
                    lines=[f"group {args.group}: offsets {note}"])
    return report.table("", ["TOPIC", "PARTITION", "NEW-OFFSET"],
                        [[r["topic"], r["partition"], r["new_offset"]] for r in rows])


def delete(args: argparse.Namespace) -> Report:
    client = admin(args)
    futures = client.delete_consumer_groups(args.groups, request_timeout=TIMEOUT_S)
    for group in args.groups:
        wait(futures[group], f"delete group {group}")
    return Report({"deleted": args.groups}).table("", ["GROUP", "STATUS"], [[g, "deleted"] for g in args.groups])


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    group = commands.add_parser("group", help="consumer and share groups: members, lag, offsets")
    sub = group.add_subparsers(dest="action", required=True)
    sub.add_parser("list", parents=[common], help="the groups").set_defaults(run=list_groups)
    for name, run, text in (("describe", describe, "state, members and their partitions"),
                            ("lag", lag, "committed offsets against the high watermarks")):
        p = sub.add_parser(name, parents=[common], help=text)
        p.add_argument("group")
        p.set_defaults(run=run)
    p = sub.add_parser("reset-offsets", parents=[common], help="move a group's committed offsets on a topic")
    p.add_argument("group")
    p.add_argument("--topic", required=True)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--to-earliest", action="store_true")
    where.add_argument("--to-latest", action="store_true")
    where.add_argument("--to-offset", type=int)
    p.add_argument("--execute", action="store_true", help="apply (without it, only show the plan)")
    p.set_defaults(run=reset_offsets)
    p = sub.add_parser("delete", parents=[common], help="delete empty groups")
    p.add_argument("groups", nargs="+")
    p.set_defaults(run=delete)
