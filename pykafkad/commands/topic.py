"""``pykafkad topic list|create|describe|alter-config|delete|add-partitions``."""

from __future__ import annotations

import argparse

from confluent_kafka import TopicPartition
from confluent_kafka.admin import (
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)

from pykafkad.commands.connection import TIMEOUT_S, CommandError, admin, metadata, wait
from pykafkad.commands.output import Report


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"{flag} {item!r}: expected KEY=VALUE")
        out[key] = value
    return out


def list_topics(args: argparse.Namespace) -> Report:
    found = metadata(admin(args), "list the topics")
    topics = [{"name": t.topic, "partitions": len(t.partitions),
               "replicas": len(next(iter(t.partitions.values())).replicas) if t.partitions else 0}
              for t in sorted(found.topics.values(), key=lambda t: t.topic)
              if args.internal or not t.topic.startswith("__")]
    return Report(topics).table("", ["NAME", "PARTITIONS", "REPLICAS"],
                                [[t["name"], t["partitions"], t["replicas"]] for t in topics])


def create(args: argparse.Namespace) -> Report:
    configs = _pairs(args.config, "--config")
    new = NewTopic(args.name, args.partitions, args.replicas, config=configs)
    client = admin(args)
    wait(client.create_topics([new], operation_timeout=TIMEOUT_S)[args.name], f"create topic {args.name}")
    return Report({"name": args.name, "created": True}).table(
        "", ["TOPIC", "STATUS"], [[args.name, "created"]])


def describe(args: argparse.Namespace) -> Report:
    client = admin(args)
    found = metadata(client, f"describe topic {args.name}", args.name)
    topic = found.topics.get(args.name)
    if topic is None or topic.error is not None:
        error = topic.error if topic is not None else None
        raise CommandError(f"describe topic {args.name}: {error.name() if error else 'UNKNOWN_TOPIC_OR_PART'}: "
                           "no such topic; list the topics with `pykafkad topic list`")
    resource = ConfigResource(ConfigResource.Type.TOPIC, args.name)
    configs = wait(client.describe_configs([resource])[resource], f"describe the configs of {args.name}")
    partitions = sorted(topic.partitions.values(), key=lambda p: p.id)
    starts = _offsets(client, args.name, partitions, OffsetSpec.earliest())
    ends = _offsets(client, args.name, partitions, OffsetSpec.latest())
    rows = [{"partition": p.id, "leader": p.leader, "replicas": p.replicas, "isr": p.isrs,
             "log_start_offset": starts.get(p.id), "high_watermark": ends.get(p.id),
             "under_replicated": len(p.isrs) < len(p.replicas)} for p in partitions]
    overrides = {name: entry.value for name, entry in sorted(configs.items())
                 if entry.source in (ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigSource.DYNAMIC_TOPIC_CONFIG.value)}
    report = Report({"name": args.name, "partitions": rows, "configs": overrides},
                    lines=[f"topic {args.name}: {len(rows)} partition(s), "
                           f"{len(partitions[0].replicas) if partitions else 0} replica(s) each"])
    report.table("PARTITIONS", ["PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START", "HIGH-WATERMARK", ""],
                 [[r["partition"], r["leader"], r["replicas"], r["isr"], r["log_start_offset"], r["high_watermark"],
                   "under-replicated" if r["under_replicated"] else ""] for r in rows])
    if overrides:
        report.table("CONFIGS (set on the topic)", ["KEY", "VALUE"], [[k, v] for k, v in overrides.items()])
    return report


def _offsets(client, topic: str, partitions: list, spec: OffsetSpec) -> dict[int, int]:  # noqa: ANN001
    wanted = {TopicPartition(topic, p.id): spec for p in partitions}
    if not wanted:
        return {}
    futures = client.list_offsets(wanted, request_timeout=TIMEOUT_S)
    return {tp.partition: wait(f, f"list the offsets of {topic}").offset for tp, f in futures.items()}


def alter_config(args: argparse.Namespace) -> Report:
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
               for k, v in _pairs(args.set, "--set").items()]
    entries += [ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in args.delete]
    if not entries:
        raise CommandError("alter-config: nothing to change; give --set KEY=VALUE or --delete KEY")
    resource = ConfigResource(ConfigResource.Type.TOPIC, args.name, incremental_configs=entries)
    client = admin(args)
    wait(client.incremental_alter_configs([resource])[resource], f"alter the configs of {args.name}")
    changes = [{"key": e.name, "value": e.value, "operation": "set" if e.value is not None else "delete"}
               for e in entries]
    return Report({"name": args.name, "changes": changes}).table(
        "", ["KEY", "CHANGE"], [[c["key"], f"set to {c['value']}" if c["value"] is not None else "deleted"]
                                for c in changes])


def delete(args: argparse.Namespace) -> Report:
    client = admin(args)
    futures = client.delete_topics(args.names, operation_timeout=TIMEOUT_S)
    for name in args.names:
        wait(futures[name], f"delete topic {name}")
    return Report({"deleted": args.names}).table("", ["TOPIC", "STATUS"], [[n, "deleted"] for n in args.names])


def add_partitions(args: argparse.Namespace) -> Report:
    client = admin(args)
    topic = metadata(client, f"add partitions to {args.name}", args.name).topics.get(args.name)
    current = len(topic.partitions) if topic is not None and topic.error is None else 0
    total = current + args.num
    wait(client.create_partitions([NewPartitions(args.name, total)])[args.name], f"add partitions to {args.name}")
    return Report({"name": args.name, "partitions": total}).table(
        "", ["TOPIC", "PARTITIONS"], [[args.name, f"{current} -> {total}"]])


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    topic = commands.add_parser("topic", help="list, create, describe, change and delete topics")
    sub = topic.add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", parents=[common], help="the topics")
    p.add_argument("-i", "--internal", action="store_true", help="include internal topics (__consumer_offsets...)")
    p.set_defaults(run=list_topics)
    p = sub.add_parser("create", parents=[common], help="create a topic")
    p.add_argument("name")
    p.add_argument("-p", "--partitions", type=int, default=-1, help="partitions (default: the broker's)")
    p.add_argument("-r", "--replicas", type=int, default=-1, help="replication factor (default: the broker's)")
    p.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE", help="a topic config")
    p.set_defaults(run=create)
    p = sub.add_parser("describe", parents=[common], help="partitions, offsets and configs of a topic")
    p.add_argument("name")
    p.set_defaults(run=describe)
    p = sub.add_parser("alter-config", parents=[common], help="set or delete topic configs")
    p.add_argument("name")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--delete", action="append", default=[], metavar="KEY")
    p.set_defaults(run=alter_config)
    p = sub.add_parser("delete", parents=[common], help="delete topics")
    p.add_argument("names", nargs="+")
    p.set_defaults(run=delete)
    p = sub.add_parser("add-partitions", parents=[common], help="add partitions to a topic")
    p.add_argument("name")
    p.add_argument("-n", "--num", type=int, required=True, help="how many partitions to add")
    p.set_defaults(run=add_partitions)
