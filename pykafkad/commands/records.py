"""``pykafkad produce TOPIC`` (one record per stdin line, ``KEY<sep>VALUE`` with ``--key-separator``)
and ``pykafkad consume TOPIC`` (from a group's committed offsets, the beginning, an offset or a
time; ``-n`` records, or until ``--timeout`` passes with nothing new)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, Producer, TopicPartition

from pykafkad.commands.connection import TIMEOUT_S, CommandError, describe_error, metadata, reachable_config
from pykafkad.commands.output import Report


def produce(args: argparse.Namespace) -> Report:
    producer = Producer({**reachable_config(args), "acks": args.acks})
    delivered: list[dict[str, Any]] = []
    failures: list[str] = []

    def report(err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            failures.append(describe_error(err, f"produce to {args.topic}"))
        else:
            delivered.append({"partition": msg.partition(), "offset": msg.offset()})

    for line in sys.stdin:
        text = line.rstrip("\n")
        key = None
        if args.key_separator and args.key_separator in text:
            key, text = text.split(args.key_separator, 1)
        producer.produce(args.topic, text.encode(), key=key.encode() if key is not None else None, on_delivery=report)
        producer.poll(0)
    left = producer.flush(TIMEOUT_S)
    if failures or left:
        raise CommandError(failures[0] if failures else f"produce to {args.topic}: {left} record(s) not "
                           "acknowledged in time; is the broker reachable?")
    by_partition: dict[int, list[int]] = {}
    for d in delivered:
        by_partition.setdefault(d["partition"], []).append(d["offset"])
    return Report({"topic": args.topic, "records": delivered}).table(
        "", ["PARTITION", "RECORDS", "OFFSETS"],
        [[p, len(o), f"{min(o)}-{max(o)}"] for p, o in sorted(by_partition.items())])


def consume(args: argparse.Namespace) -> Report:
    settings = {**reachable_config(args), "group.id": args.group or f"pykafkad-consume-{int(time.time() * 1000)}",
                "enable.auto.commit": bool(args.group), "auto.offset.reset": "earliest"}
    consumer = Consumer(settings)
    try:
        topic = metadata(consumer, f"consume {args.topic}", args.topic).topics.get(args.topic)
        if topic is None or topic.error is not None:
            raise CommandError(f"consume {args.topic}: no such topic; list the topics with `pykafkad topic list`")
        partitions = [TopicPartition(args.topic, p) for p in sorted(topic.partitions)]
        subscribed = False
        if args.offset is not None:
            consumer.assign([TopicPartition(args.topic, tp.partition, args.offset) for tp in partitions])
        elif args.timestamp is not None:
            found = consumer.offsets_for_times([TopicPartition(args.topic, tp.partition, args.timestamp)
                                                for tp in partitions], timeout=TIMEOUT_S)
            consumer.assign([TopicPartition(args.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_END)
                             for tp in found])
        elif args.from_beginning or not args.group:
            consumer.assign([TopicPartition(args.topic, tp.partition, OFFSET_BEGINNING) for tp in partitions])
        else:
            consumer.subscribe([args.topic])
            subscribed = True
        records = []
        quiet_since = time.monotonic()
        while args.num is None or len(records) < args.num:
            msg = consumer.poll(0.2)
            if msg is None:
                if time.monotonic() - quiet_since > args.timeout:
                    break
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise CommandError(describe_error(msg.error(), f"consume {args.topic}"))
            quiet_since = time.monotonic()
            record = {"partition": msg.partition(), "offset": msg.offset(), "timestamp": msg.timestamp()[1],
                      "key": _text(msg.key()), "value": _text(msg.value()),
                      "headers": {k: _text(v) for k, v in (msg.headers() or [])}}
            records.append(record)
            if not args.json:
                print(record["value"] if not args.print_keys else f"{record['key']}\t{record['value']}", flush=True)
        if subscribed and not records and not consumer.assignment():
            # A group that never formed prints nothing; say why instead of exiting as if the topic were empty.
            raise CommandError(
                f"consume {args.topic}: group {args.group} was given no partitions in {args.timeout:g} s: its "
                "coordinator may be unavailable (a single broker needs offsets.topic.replication.factor=1; the "
                "broker log says why) or the group has more members than the topic has partitions; "
                "try `pykafkad group describe " + args.group + "`")
        if args.group and records:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    # Printed as they came; with --json, as one document at the end.
    return Report(records)


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.hex()


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser("produce", parents=[common], help="write stdin's lines to a topic")
    p.add_argument("topic")
    p.add_argument("-k", "--key-separator", help="split each line into KEY and VALUE at this string")
    p.add_argument("--acks", default="all", choices=["0", "1", "all", "-1"])
    p.set_defaults(run=produce)
    p = commands.add_parser("consume", parents=[common], help="print a topic's records")
    p.add_argument("topic")
    p.add_argument("-g", "--group", help="consume as this group (from its committed offsets; commits)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--from-beginning", action="store_true")
    where.add_argument("--offset", type=int, help="start every partition at this offset")
    where.add_argument("--timestamp", type=int, help="start at the first record at or after this time (ms)")
    p.add_argument("-n", "--num", type=int, help="stop after this many records")
    p.add_argument("--timeout", type=float, default=5.0, help="stop after this many seconds with nothing new")
    p.add_argument("--print-keys", action="store_true")
    p.set_defaults(run=consume)
