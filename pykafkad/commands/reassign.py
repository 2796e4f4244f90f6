"""``pykafkad reassign start|status|cancel``: move partitions' replicas between brokers (KIP-455,
what ``kafka-reassign-partitions.sh --execute|--verify|--cancel`` does) and watch a move with a
progress bar.

Progress is bytes: what each new replica holds (DescribeLogDirs on its broker) against the
leader's log size, summed over the partitions being moved; a partition is done when the
controller no longer lists it (ListPartitionReassignments).  ``--throttle`` sets Kafka's
replication throttle for the move, as the Kafka tool does; a ``--wait`` that sees every move
finish clears it again, as the Kafka tool's ``--verify`` does."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from pykafkad.commands.connection import CommandError
from pykafkad.commands.output import Report
from pykafkad.commands.protocol_client import ProtocolClient, error_name, with_client

DESCRIBE_LOG_DIRS, INCREMENTAL_ALTER_CONFIGS = 35, 44
ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
SET, DELETE = 0, 1
POLL_S = 1.0
THROTTLED_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")

_NEXT_STEP = {
    "INVALID_REPLICA_ASSIGNMENT": "give live broker ids, each once (`pykafkad cluster info` lists them)",
    "UNKNOWN_TOPIC_OR_PARTITION": "list the topics with `pykafkad topic list`",
    "NO_REASSIGNMENT_IN_PROGRESS": "nothing to cancel: see the moves with `pykafkad reassign status`",
    "INVALID_REPLICATION_FACTOR": "give as many replicas as the partition has",
    "CLUSTER_AUTHORIZATION_FAILED": "ask an administrator for ALTER (or DESCRIBE) on the cluster",
}

PartitionKey = tuple[str, int]


@dataclass
class Move:
    """One partition being reassigned, and how far its new replicas have copied the leader's log."""

    topic: str
    partition: int
    replicas: list[int]
    adding: list[int]
    removing: list[int]
    leader: int
    leader_bytes: int
    copied_bytes: int

    @property
    def target_bytes(self) -> int:
        return self.leader_bytes * len(self.adding)

    @property
    def percent(self) -> float:
        return 100.0 if not self.target_bytes else 100.0 * self.copied_bytes / self.target_bytes

    def as_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "replicas": self.replicas, "adding": self.adding,
                "removing": self.removing, "leader": self.leader, "leader_bytes": self.leader_bytes,
                "copied_bytes": self.copied_bytes, "target_bytes": self.target_bytes,
                "percent": round(self.percent, 1)}


def _error(what: str, code: int, message: str | None = None) -> CommandError:
    name = error_name(code)
    step = _NEXT_STEP.get(name)
    return CommandError(f"{what}: {name}" + (f": {message}" if message else "") + (f"; {step}" if step else ""))


async def _listed(client: ProtocolClient) -> list[tuple[str, dict[str, Any]]]:
    """Every reassignment the controller lists: (topic, its partition entry)."""
    listed = await client.request(LIST_PARTITION_REASSIGNMENTS, {"timeout_ms": 30000, "topics": None},
                                  client.controller)
    if listed["error_code"]:
        raise _error("list the reassignments", listed["error_code"], listed.get("error_message"))
    return [(t["name"], p) for t in listed["topics"] for p in t["partitions"]]


async def ongoing_moves(client: ProtocolClient) -> list[Move]:
    """Every reassignment the controller lists, with the bytes its new replicas hold."""
    moving = await _listed(client)
    if not moving:
        return []
    metadata = await client.refresh_metadata(sorted({name for name, _ in moving}))
    leaders = {(t["name"], p["partition_index"]): p["leader_id"] for t in metadata["topics"] for p in t["partitions"]}
    sizes = await _replica_sizes(client, {(name, p["partition_index"]) for name, p in moving},
                                 {b for _, p in moving for b in p["replicas"]})
    moves = []
    for name, p in sorted(moving, key=lambda m: (m[0], m[1]["partition_index"])):
        key = (name, p["partition_index"])
        leader = leaders.get(key, -1)
        existing = [b for b in p["replicas"] if b not in p["adding_replicas"]]
        # Without a live leader, the largest of the old replicas is what there is to copy.
        leader_bytes = sizes.get((key, leader)) if leader >= 0 else None
        if leader_bytes is None:
            leader_bytes = max((sizes.get((key, b), 0) for b in existing), default=0)
        copied = sum(min(sizes.get((key, b), 0), leader_bytes) for b in p["adding_replicas"])
        moves.append(Move(name, p["partition_index"], p["replicas"], p["adding_replicas"], p["removing_replicas"],
                          leader, leader_bytes, copied))
    return moves


async def _replica_sizes(client: ProtocolClient, partitions: set[PartitionKey],
                         brokers: set[int]) -> dict[tuple[PartitionKey, int], int]:
    """(partition, broker) -> bytes of that broker's current replica (not a future one)."""
    by_topic: dict[str, list[int]] = {}
    for name, index in partitions:
        by_topic.setdefault(name, []).append(index)
    body = {"topics": [{"topic": t, "partitions": sorted(ps)} for t, ps in by_topic.items()]}
    sizes: dict[tuple[PartitionKey, int], int] = {}
    for broker in sorted(brokers):
        if broker not in client.brokers:
            continue  # an offline broker holds nothing we can read
        try:
            answer = await client.request(DESCRIBE_LOG_DIRS, body, broker)
        except CommandError:
            continue  # a broker that went away mid-move: its replicas count as empty
        for log_dir in answer["results"]:
            for topic in log_dir["topics"]:
                for p in topic["partitions"]:
                    if not p.get("is_future_key", False):
                        key = ((topic["name"], p["partition_index"]), broker)
                        sizes[key] = max(sizes.get(key, 0), p["partition_size"])
    return sizes


async def _alter(client: ProtocolClient, wanted: dict[PartitionKey, list[int] | None]) -> list[dict[str, Any]]:
    """AlterPartitionReassignments (replicas None cancels); one row per partition with its outcome."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), replicas in sorted(wanted.items()):
        by_topic.setdefault(topic, []).append({"partition_index": index, "replicas": replicas})
    answer = await client.request(ALTER_PARTITION_REASSIGNMENTS, {
        "timeout_ms": 30000, "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]},
        client.controller)
    if answer["error_code"]:
        raise _error("reassign", answer["error_code"], answer.get("error_message"))
    rows = []
    for topic in answer["responses"]:
        for p in topic["partitions"]:
            name = error_name(p["error_code"]) if p["error_code"] else None
            rows.append({"topic": topic["name"], "partition": p["partition_index"],
                         "replicas": wanted.get((topic["name"], p["partition_index"])), "error": name,
                         "message": p.get("error_message"), "next_step": _NEXT_STEP.get(name or "")})
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))


async def _set_configs(client: ProtocolClient, resource_type: int, name: str, node: int | None,
                       configs: list[tuple[str, int, str | None]]) -> None:
    answer = await client.request(INCREMENTAL_ALTER_CONFIGS, {"validate_only": False, "resources": [{
        "resource_type": resource_type, "resource_name": name,
        "configs": [{"name": k, "config_operation": op, "value": v} for k, op, v in configs]}]}, node)
    for result in answer["responses"]:
        if result["error_code"]:
            what = "topic" if resource_type == TOPIC_RESOURCE else "broker"
            raise _error(f"set the replication throttle on {what} {name}", result["error_code"],
                         result.get("error_message"))


async def _throttle(client: ProtocolClient, wanted: dict[PartitionKey, list[int]], rate: int,
                    current: dict[PartitionKey, list[int]]) -> list[int]:
    """Kafka's throttle for a move: the rate on every broker taking part, the old replicas throttled as
    leaders and the new ones as followers; the brokers it was set on."""
    leaders: dict[str, list[str]] = {}
    followers: dict[str, list[str]] = {}
    brokers: set[int] = set()
    for (topic, index), replicas in wanted.items():
        old = current.get((topic, index), [])
        brokers.update(old, replicas)
        leaders.setdefault(topic, []).extend(f"{index}:{b}" for b in old)
        followers.setdefault(topic, []).extend(f"{index}:{b}" for b in replicas if b not in old)
    for topic in sorted(leaders):
        await _set_configs(client, TOPIC_RESOURCE, topic, None, [
            (key, SET, ",".join(entries)) for key, entries in ((THROTTLED_REPLICAS[0], leaders[topic]),
                                                               (THROTTLED_REPLICAS[1], followers[topic])) if entries])
    for broker in sorted(b for b in brokers if b in client.brokers):
        await _set_configs(client, BROKER_RESOURCE, str(broker), broker, [(key, SET, str(rate))
                                                                          for key in THROTTLED_RATES])
    return sorted(brokers)


async def _clear_throttle(client: ProtocolClient, topics: set[str]) -> None:
    """As Kafka's ``--verify`` once a plan is done: the topics' throttled replicas and every broker's rates."""
    for topic in sorted(topics):
        await _set_configs(client, TOPIC_RESOURCE, topic, None, [(k, DELETE, None) for k in THROTTLED_REPLICAS])
    for broker in sorted(client.brokers):
        await _set_configs(client, BROKER_RESOURCE, str(broker), broker, [(k, DELETE, None) for k in THROTTLED_RATES])


class ProgressDisplay:
    """A rich progress bar on a terminal; otherwise a plain line on stderr whenever the figures change
    (logs and pipes get a readable history); nothing with ``--json``."""

    def __init__(self, quiet: bool) -> None:
        self._terminal = Console(stderr=True).is_terminal
        self._quiet = quiet
        self._last: tuple[int, int, int, int] | None = None
        self._bar: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> ProgressDisplay:
        if self._terminal and not self._quiet:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                 TaskProgressColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                                 transient=False)
            self._bar.start()
            self._task = self._bar.add_task("reassigning", total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, copied: int, total: int, done: int, partitions: int) -> None:
        figures = (copied, total, done, partitions)
        if self._quiet or figures == self._last:
            return
        self._last = figures
        what = f"{done} of {partitions} partition(s) moved"
        if self._bar is not None:
            self._bar.update(self._task, completed=copied, total=max(total, 1), description=what)
            return
        percent = 100.0 if not total else 100.0 * copied / total
        print(f"copied {_size(copied)} of {_size(total)} ({percent:.0f}%), {what}", file=sys.stderr, flush=True)


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    value = n / 1000
    for unit in ("kB", "MB"):
        if value < 1000:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


async def wait_for(client: ProtocolClient, keys: set[PartitionKey] | None,
                   display: ProgressDisplay) -> set[PartitionKey]:
    """Until none of ``keys`` (every move listed at the first look, when None) is still moving; the
    partitions waited for.  Bytes of a finished partition count as copied."""
    targets: dict[PartitionKey, int] = {}
    while True:
        moves = await ongoing_moves(client)
        if keys is None:
            keys = {(m.topic, m.partition) for m in moves}
        current = [m for m in moves if (m.topic, m.partition) in keys]
        for m in current:
            targets[(m.topic, m.partition)] = max(targets.get((m.topic, m.partition), 0), m.target_bytes)
        moving = {(m.topic, m.partition): m for m in current}
        copied = sum(min(moving[k].copied_bytes, t) if k in moving else t for k, t in targets.items())
        display.update(copied, sum(targets.values()), len(keys) - len(moving), len(keys))
        if not moving:
            return keys
        await trio.sleep(POLL_S)


def _moves_report(moves: list[Move], lines: list[str]) -> Report:
    report = Report({"reassignments": [m.as_dict() for m in moves]}, lines=lines)
    if moves:
        report.table("", ["TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING", "LEADER", "COPIED"],
                     [[m.topic, m.partition, m.replicas, m.adding or "", m.removing or "", m.leader,
                       f"{_size(m.copied_bytes)} of {_size(m.target_bytes)} ({m.percent:.0f}%)"] for m in moves])
    return report


def _failures(rows: list[dict[str, Any]]) -> list[str]:
    """One line per refused partition: its Kafka error, the broker's message and what to do next."""
    return [f"{r['topic']}-{r['partition']}: {r['error']}" + (f": {r['message']}" if r["message"] else "")
            + (f"; {r['next_step']}" if r["next_step"] else "") for r in rows]


def _plan(args: argparse.Namespace) -> dict[PartitionKey, list[int]]:
    """The wanted replicas, from --topic/--partition/--replicas or Kafka's reassignment JSON."""
    if args.reassignment_json_file is not None:
        if args.topic or args.partition is not None or args.replicas:
            raise CommandError("give either --reassignment-json-file or --topic/--partition/--replicas")
        try:
            plan = json.loads(args.reassignment_json_file.read_text())
            return {(str(p["topic"]), int(p["partition"])): [int(r) for r in p["replicas"]]
                    for p in plan["partitions"]}
        except OSError as e:
            raise CommandError(f"--reassignment-json-file {args.reassignment_json_file}: {e.strerror}") from None
        except (ValueError, KeyError, TypeError) as e:
            raise CommandError(f"--reassignment-json-file {args.reassignment_json_file}: not Kafka's reassignment "
                               f'JSON ({{"version":1,"partitions":[{{"topic":..,"partition":..,"replicas":[..]}}]}}):'
                               f" {type(e).__name__}: {e}") from None
    if not args.topic or args.partition is None or not args.replicas:
        raise CommandError("give --topic, --partition and --replicas (or --reassignment-json-file)")
    try:
        replicas = [int(r) for r in args.replicas.split(",")]
    except ValueError:
        raise CommandError(f"--replicas {args.replicas!r}: expected broker ids such as 1,2,3") from None
    return {(args.topic, args.partition): replicas}


def start(args: argparse.Namespace) -> Report:
    wanted = _plan(args)
    if args.throttle is not None and args.throttle <= 0:
        raise CommandError(f"--throttle {args.throttle}: give a rate in bytes per second above 0")

    async def body(client: ProtocolClient) -> Report:
        lines = []
        if args.throttle is not None:
            metadata = await client.refresh_metadata(sorted({t for t, _ in wanted}))
            # A partition already moving lists its new replicas among its replicas: they are not sources.
            adding = {(name, p["partition_index"]): p["adding_replicas"] for name, p in await _listed(client)}
            current = {(t["name"], p["partition_index"]): [r for r in p["replica_nodes"] if r not in adding.get(
                (t["name"], p["partition_index"]), [])] for t in metadata["topics"] for p in t["partitions"]}
            brokers = await _throttle(client, wanted, args.throttle, current)
            lines.append(f"replication throttled to {args.throttle} B/s on brokers {','.join(map(str, brokers))}")
        rows = await _alter(client, wanted)
        failed = [r for r in rows if r["error"]]
        started = [f"{r['topic']}-{r['partition']}" for r in rows if not r["error"]]
        if started:
            lines.append(f"started reassigning {', '.join(started)}")
        report = Report({"partitions": rows}, lines=lines + _failures(failed), exit_code=1 if failed else 0)
        if args.wait and started:
            await _wait_and_clear(client, {(r["topic"], r["partition"]) for r in rows if not r["error"]}, args, report)
        return report

    return with_client(args, body)


async def _wait_and_clear(client: ProtocolClient, keys: set[PartitionKey] | None, args: argparse.Namespace,
                          report: Report) -> None:
    with ProgressDisplay(quiet=args.json) as display:
        waited = await wait_for(client, keys, display)
    if not waited:
        return
    report.lines.append(f"{len(waited)} partition(s) moved")
    report.data["moved"] = [{"topic": t, "partition": p} for t, p in sorted(waited)]
    if not await ongoing_moves(client):
        await _clear_throttle(client, {t for t, _ in waited})
        report.lines.append("no reassignment left: replication throttles cleared")


def status(args: argparse.Namespace) -> Report:
    async def body(client: ProtocolClient) -> Report:
        moves = await ongoing_moves(client)
        if not args.wait or not moves:
            return _moves_report(moves, [f"{len(moves)} reassignment(s) in progress"])
        report = Report({}, lines=[])
        await _wait_and_clear(client, None, args, report)
        return report if report.lines else _moves_report([], ["0 reassignment(s) in progress"])

    return with_client(args, body)


def cancel(args: argparse.Namespace) -> Report:
    async def body(client: ProtocolClient) -> Report:
        if args.all:
            keys = [(m.topic, m.partition) for m in await ongoing_moves(client)]
            if not keys:
                return Report({"partitions": []}, lines=["no reassignment in progress: nothing to cancel"])
        elif args.topic and args.partition is not None:
            keys = [(args.topic, args.partition)]
        else:
            raise CommandError("give --topic and --partition, or --all")
        rows = await _alter(client, {k: None for k in keys})
        failed = [r for r in rows if r["error"]]
        cancelled = [f"{r['topic']}-{r['partition']}" for r in rows if not r["error"]]
        return Report({"partitions": rows}, exit_code=1 if failed else 0,
                      lines=([f"cancelled {', '.join(cancelled)}"] if cancelled else []) + _failures(failed))

    return with_client(args, body)


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    reassign = commands.add_parser("reassign", help="move partition replicas between brokers, with progress")
    sub = reassign.add_subparsers(dest="action", required=True)
    begin = sub.add_parser("start", parents=[common], help="start moving replicas (AlterPartitionReassignments)")
    begin.add_argument("--topic")
    begin.add_argument("--partition", type=int)
    begin.add_argument("--replicas", help="the new replica list, preferred leader first, e.g. 2,3,1")
    begin.add_argument("--reassignment-json-file", type=Path, help="a plan in kafka-reassign-partitions' JSON")
    begin.add_argument("--throttle", type=int, metavar="BYTES_PER_S",
                       help="limit the replication the move causes (Kafka's replication throttle)")
    begin.add_argument("--wait", action="store_true", help="show progress until moved (then clear the throttle)")
    begin.set_defaults(run=start)
    watch = sub.add_parser("status", parents=[common], help="moves in progress and how far they have copied")
    watch.add_argument("--wait", action="store_true", help="show progress until every move is done")
    watch.set_defaults(run=status)
    stop = sub.add_parser("cancel", parents=[common], help="cancel moves (the old replicas stay)")
    stop.add_argument("--topic")
    stop.add_argument("--partition", type=int)
    stop.add_argument("--all", action="store_true", help="every move in progress")
    stop.set_defaults(run=cancel)

