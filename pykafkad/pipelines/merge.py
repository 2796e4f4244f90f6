"""The merge pipeline: build one aggregated topic from several topics — a union in which every
record keeps key, value and headers and gains the header ``source.topic`` naming where it came
from — or, with ``--counts-per-minute``, a windowed aggregation: how many records each key had
in each minute (event time, from the record timestamp).

Counts are written with the update output mode: each micro-batch sends the new count of every
(window, key) it touched, keyed ``<key>@<window start>``, value JSON
``{"window_start", "window_end", "key", "count"}``; a compacted topic (or the last record per
key) holds the final count.  Records later than ``--watermark`` behind the newest are dropped.

    pykafkad pipeline merge -b localhost:9092 --topics orders-eu,orders-us \\
        --to-topic orders-all --checkpoint /tmp/ckpt/orders-merge
    pykafkad pipeline merge -b localhost:9092 --topics clicks --counts-per-minute \\
        --to-topic clicks-per-minute --checkpoint /tmp/ckpt/clicks-counts
"""

from __future__ import annotations

import argparse
import sys

try:
    from pykafkad.pipelines import common
except ImportError:  # run as a script by spark-submit: common.py sits next to this file
    import common  # type: ignore[no-redef]

NAME = "merge"
SOURCE_TOPIC_HEADER = "source.topic"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykafkad pipeline merge", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_kafka_args(p)
    p.add_argument("--topics", help="comma-separated source topics")
    p.add_argument("--pattern", help="source topics by regular expression")
    p.add_argument("--to-topic", help="the merged topic (default: print to the console)")
    p.add_argument("--counts-per-minute", action="store_true",
                   help="instead of a union, count records per key per minute")
    p.add_argument("--window", default="1 minute", help="window length for the counts (default: 1 minute)")
    p.add_argument("--watermark", default="10 minutes",
                   help="how late a record may arrive and still be counted (default: 10 minutes)")
    common.add_stream_args(p)
    common.add_spark_args(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Start the merge (or the counts) and wait for it; returns the number of records read."""
    from pyspark.sql import functions as F

    subscribe = common.subscription(args.topics, args.pattern)
    spark = common.build_session(f"pykafkad-{NAME}", args)
    source = common.read_stream(spark, args, args.bootstrap_servers, subscribe)
    if args.counts_per_minute:
        window = F.window("timestamp", args.window)
        counts = (source.withWatermark("timestamp", args.watermark)
                  .groupBy(window.alias("w"), F.col("key").cast("string").alias("k"))
                  .count())
        start = F.date_format("w.start", "yyyy-MM-dd'T'HH:mm:ss'Z'")
        end = F.date_format("w.end", "yyyy-MM-dd'T'HH:mm:ss'Z'")
        out = counts.select(
            F.concat(F.coalesce("k", F.lit("")), F.lit("@"), start).alias("key"),
            F.to_json(F.struct(start.alias("window_start"), end.alias("window_end"),
                               F.col("k").alias("key"), F.col("count"))).alias("value"))
        mode = "update"
    else:
        tag = F.struct(F.lit(SOURCE_TOPIC_HEADER).alias("key"), F.col("topic").cast("binary").alias("value"))
        headers = F.concat(F.coalesce("headers", F.array().cast(source.schema["headers"].dataType)),
                           F.array(tag))
        out = source.select("key", "value", headers.alias("headers"))
        mode = "append"
    if args.to_topic:
        writer = (out.writeStream.format("kafka").outputMode(mode)
                  .options(**common.kafka_options(args.bootstrap_servers, args)).option("topic", args.to_topic))
    else:
        shown = out.select(F.col("key").cast("string"), F.col("value").cast("string"))
        writer = shown.writeStream.format("console").outputMode(mode).option("truncate", "false")
    query = common.start_stream(writer, args, NAME)
    return common.run_query(query, NAME, args.timeout)


def main(argv: list[str] | None = None) -> int:
    def body(a: list[str] | None) -> int:
        run(build_parser().parse_args(a))
        return 0

    return common.run_main(body, argv)


if __name__ == "__main__":
    sys.exit(main())
