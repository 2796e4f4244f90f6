"""The search pipeline: find messages in a topic by key, header value (tag) or value substring,
within an offset or time range, and answer "was this message there?" with the partition, offset
and timestamp of each hit.  A batch job: it reads the range once and stops.

Every condition given must hold.  The time range is pushed to Kafka (startingTimestamp /
endingTimestamp: only that part of the log is fetched); the offset range and the matches are
filters on what is read.  Exit status 0 when something matched, 1 when nothing did (like grep).

    pykafkad pipeline search -b localhost:9092 --topic orders --key order-42
    pykafkad pipeline search -b localhost:9092 --topic orders --header tag=urgent \\
        --from-time 2024-05-01T00:00:00Z --to-time 2024-05-02T00:00:00Z
    pykafkad pipeline search -b localhost:9092 --topic orders --contains '"status":"lost"' \\
        --partition 3 --from-offset 1000 --to-offset 2000
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

try:
    from pykafkad.pipelines import common
except ImportError:  # run as a script by spark-submit: common.py sits next to this file
    import common  # type: ignore[no-redef]

NAME = "search"


@dataclass(frozen=True)
class Hit:
    """One matching record: where it is, and what it holds."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]

    def line(self, preview: int = 80) -> str:
        when = datetime.fromtimestamp(self.timestamp_ms / 1000, UTC).isoformat(timespec="milliseconds")
        return (f"{self.topic} partition {self.partition} offset {self.offset} {when} "
                f"key={_show(self.key, preview)} value={_show(self.value, preview)}")

    def as_json(self) -> str:
        return json.dumps({
            "topic": self.topic, "partition": self.partition, "offset": self.offset,
            "timestamp": self.timestamp_ms, "key": _text(self.key), "value": _text(self.value),
            "headers": [[k, _text(v)] for k, v in self.headers]})


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "replace")


def _show(b: bytes | None, limit: int) -> str:
    if b is None:
        return "null"
    t = _text(b) or ""
    return repr(t if len(t) <= limit else t[:limit] + "...")


def parse_time(text: str) -> int:
    """Epoch milliseconds from digits, or from an ISO-8601 time (UTC unless it says otherwise)."""
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as e:
        raise common.PipelineError(f"time {text!r} is neither epoch milliseconds nor ISO-8601 "
                                   "(e.g. 2024-05-01T12:00:00Z)") from e
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return int(t.timestamp() * 1000)


def _header_is(name: str, value: bytes) -> Any:
    """A one-argument lambda for F.exists: this header has this value (a Spark expression, no UDF)."""
    from pyspark.sql import functions as F

    return lambda h: (h["key"] == F.lit(name)) & (h["value"] == F.lit(value))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykafkad pipeline search", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_kafka_args(p)
    p.add_argument("--topic", help="topic to search (or comma-separated topics)")
    p.add_argument("--pattern", help="topics to search, by regular expression")
    m = p.add_argument_group("what to find (all given must match)")
    m.add_argument("--key", help="the record key, as UTF-8 text")
    m.add_argument("--header", action="append", default=[], metavar="NAME=VALUE",
                   help="a header with this value, e.g. tag=urgent (repeatable)")
    m.add_argument("--contains", help="a substring of the value (UTF-8 text)")
    r = p.add_argument_group("where to look")
    r.add_argument("--partition", type=int, help="only this partition (needs a single --topic)")
    r.add_argument("--from-offset", type=int, help="first offset to look at (inclusive)")
    r.add_argument("--to-offset", type=int, help="last offset to look at (inclusive)")
    r.add_argument("--from-time", help="earliest timestamp (epoch ms or ISO-8601), inclusive")
    r.add_argument("--to-time", help="latest timestamp (epoch ms or ISO-8601), exclusive")
    p.add_argument("--limit", type=int, default=100, help="report at most this many hits (default 100)")
    p.add_argument("--json", action="store_true", help="one JSON object per hit instead of text")
    common.add_spark_args(p)
    return p


def _source_options(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    if args.partition is not None:
        if args.topic is None or "," in args.topic:
            raise common.PipelineError("--partition needs a single --topic")
        subscribe = {"assign": json.dumps({args.topic: [args.partition]})}
    else:
        subscribe = common.subscription(args.topic, args.pattern)
    extra: dict[str, str] = {}
    if args.from_time is not None:
        extra["startingTimestamp"] = str(parse_time(args.from_time))
        # No record at or after the time in some partition: nothing to read there, not an error.
        extra["startingOffsetsByTimestampStrategy"] = "latest"
    if args.to_time is not None:
        extra["endingTimestamp"] = str(parse_time(args.to_time))
    return subscribe, extra


def run(args: argparse.Namespace, out: Any = None) -> list[Hit]:
    """Search and print the hits; returns them (at most --limit)."""
    from pyspark.sql import functions as F

    out = out or sys.stdout
    if not (args.key or args.header or args.contains):
        print(f"[{NAME}] no --key, --header or --contains: listing every record in range", file=out)
    subscribe, extra = _source_options(args)
    spark = common.build_session(f"pykafkad-{NAME}", args)
    df = common.read_batch(spark, args, subscribe, extra)
    cond = F.lit(True)
    if args.key is not None:
        cond &= F.col("key") == F.lit(args.key.encode())
    for name, value in common.parse_key_values(args.header, "--header").items():
        cond &= F.exists("headers", _header_is(name, value.encode()))
    if args.contains is not None:
        cond &= F.instr(F.col("value").cast("string"), args.contains) > 0
    if args.from_offset is not None:
        cond &= F.col("offset") >= args.from_offset
    if args.to_offset is not None:
        cond &= F.col("offset") <= args.to_offset
    if args.from_time is not None:
        cond &= F.unix_millis("timestamp") >= parse_time(args.from_time)
    if args.to_time is not None:
        cond &= F.unix_millis("timestamp") < parse_time(args.to_time)
    where = " ".join(f"{k}={v}" for k, v in {**subscribe, **extra}.items())
    print(f"[{NAME}] scanning {where}", file=out, flush=True)
    rows = (df.where(cond).select("topic", "partition", "offset", F.unix_millis("timestamp").alias("ts"),
                                  "key", "value", "headers")
            .orderBy("topic", "partition", "offset").limit(args.limit).collect())
    hits = [Hit(r.topic, r.partition, r.offset, r.ts, None if r.key is None else bytes(r.key),
                None if r.value is None else bytes(r.value),
                tuple((h.key, None if h.value is None else bytes(h.value)) for h in (r.headers or [])))
            for r in rows]
    for h in hits:
        print(h.as_json() if args.json else h.line(), file=out, flush=True)
    more = " (limit reached; raise --limit for more)" if len(hits) == args.limit else ""
    print(f"[{NAME}] {len(hits)} hit(s){more}" if hits else f"[{NAME}] not found", file=out, flush=True)
    return hits


def main(argv: list[str] | None = None) -> int:
    def body(a: list[str] | None) -> int:
        return 0 if run(build_parser().parse_args(a)) else 1

    return common.run_main(body, argv)


if __name__ == "__main__":
    sys.exit(main())
