"""The sql pipeline: run a Spark SQL query over one or more topics, each exposed as a table with
columns key, value, headers, timestamp, partition, offset (and topic), then print the result or
write it to a topic.  A batch job over what the topics hold when it starts.

key and value are UTF-8 strings and header values strings (``--binary`` keeps the bytes).
To write to a topic the result needs a ``value`` column, and may have ``key``, ``headers``
(array of key/value structs) and ``partition``; other columns are dropped with a warning.

    pykafkad pipeline sql -b localhost:9092 --table orders=orders-eu,orders-us \\
        --query "SELECT key, count(*) AS n FROM orders GROUP BY key ORDER BY n DESC"
    pykafkad pipeline sql -b localhost:9092 --table clicks=clicks \\
        --query "SELECT key, upper(value) AS value FROM clicks WHERE value LIKE '%buy%'" \\
        --to-topic clicks-buy
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

try:
    from pykafkad.pipelines import common
except ImportError:  # run as a script by spark-submit: common.py sits next to this file
    import common  # type: ignore[no-redef]

NAME = "sql"
SINK_COLUMNS = ("key", "value", "headers", "partition")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykafkad pipeline sql", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_kafka_args(p)
    p.add_argument("--table", action="append", default=[], metavar="NAME=TOPIC[,TOPIC...]",
                   help="expose these topics as table NAME (repeatable)")
    p.add_argument("--topic", action="append", default=[],
                   help="expose a topic as a table of the same name, non-word characters as _ (repeatable)")
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--query", help="the SQL query")
    q.add_argument("--query-file", type=argparse.FileType("r"), help="a file holding the SQL query")
    p.add_argument("--binary", action="store_true", help="keep key, value and header values as bytes")
    p.add_argument("--to-topic", help="write the result to this topic instead of printing it")
    p.add_argument("--limit", type=int, default=50, help="rows to print (default 50)")
    common.add_spark_args(p)
    return p


def tables(args: argparse.Namespace) -> dict[str, str]:
    """Table name -> comma-separated topics, from --table and --topic."""
    out = common.parse_key_values(args.table, "--table")
    for topic in args.topic:
        out[re.sub(r"\W", "_", topic)] = topic
    if not out:
        raise common.PipelineError("no tables: give --table NAME=TOPIC or --topic TOPIC")
    return out


def register_tables(spark: Any, args: argparse.Namespace) -> None:
    from pyspark.sql import functions as F

    for name, topics in tables(args).items():
        df = common.read_batch(spark, args, {"subscribe": topics})
        if not args.binary:
            df = df.select(
                F.col("key").cast("string").alias("key"), F.col("value").cast("string").alias("value"),
                F.transform("headers", lambda h: F.struct(h["key"].alias("key"),
                                                          h["value"].cast("string").alias("value")))
                .alias("headers"),
                "timestamp", "partition", "offset", "topic")
        else:
            df = df.select("key", "value", "headers", "timestamp", "partition", "offset", "topic")
        df.createOrReplaceTempView(name)
        print(f"[{NAME}] table {name}: topic(s) {topics}", flush=True)


def run(args: argparse.Namespace, out: Any = None) -> list[Any]:
    """Run the query; print it (returning the printed rows) or write it (returning [])."""
    out = out or sys.stdout
    query = args.query if args.query is not None else args.query_file.read()
    spark = common.build_session(f"pykafkad-{NAME}", args)
    register_tables(spark, args)
    from pyspark.errors import PySparkException

    try:
        result = spark.sql(query)
    except PySparkException as e:  # AnalysisException, ParseException: say what is wrong
        raise common.PipelineError(f"the query does not run: {str(e).strip().splitlines()[0]}") from e
    if args.to_topic:
        if "value" not in result.columns:
            raise common.PipelineError("to write to a topic the query needs a value column "
                                       "(e.g. SELECT key, to_json(struct(*)) AS value FROM ...)")
        dropped = [c for c in result.columns if c not in SINK_COLUMNS]
        if dropped:
            print(f"[{NAME}] warning: columns {dropped} are not written (only {list(SINK_COLUMNS)})", file=out)
        result = result.select(*[c for c in result.columns if c in SINK_COLUMNS])
        (result.write.format("kafka").options(**common.kafka_options(args.bootstrap_servers, args))
         .option("topic", args.to_topic).save())
        print(f"[{NAME}] wrote the result to {args.to_topic}", file=out, flush=True)
        return []
    rows = result.limit(args.limit).collect()
    print(" | ".join(result.columns), file=out)
    for r in rows:
        print(" | ".join("null" if v is None else str(v) for v in r), file=out)
    print(f"[{NAME}] {len(rows)} row(s){' (limit reached)' if len(rows) == args.limit else ''}",
          file=out, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    def body(a: list[str] | None) -> int:
        run(build_parser().parse_args(a))
        return 0

    return common.run_main(body, argv)


if __name__ == "__main__":
    sys.exit(main())
