"""The archive pipeline: continuously copy a topic into an archive topic that keeps data longer
(its own ``retention.ms``/``retention.bytes``, set when the pipeline creates it), or into Parquet
files partitioned by date (``date=YYYY-MM-DD`` directories, from the record timestamp, UTC).

The archive topic keeps key, value, headers and partition, and carries the source timestamp in
the header ``pykafkad.source.timestamp`` (Spark's Kafka sink cannot set timestamps).  Parquet
rows keep every field: topic, partition, offset, timestamp, key, value, headers.

    pykafkad pipeline archive -b localhost:9092 --topic orders \\
        --to-topic orders-archive --retention-ms 31536000000 --checkpoint /tmp/ckpt/orders-archive
    pykafkad pipeline archive -b localhost:9092 --topic orders \\
        --to-parquet /data/orders --checkpoint /tmp/ckpt/orders-parquet
"""

from __future__ import annotations

import argparse
import sys

try:
    from pykafkad.pipelines import common
except ImportError:  # run as a script by spark-submit: common.py sits next to this file
    import common  # type: ignore[no-redef]

NAME = "archive"
SOURCE_TIMESTAMP_HEADER = "pykafkad.source.timestamp"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykafkad pipeline archive", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_kafka_args(p)
    p.add_argument("--topic", help="topic to archive (or comma-separated topics)")
    p.add_argument("--pattern", help="topics to archive, by regular expression")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--to-topic", help="archive topic (created with the source's partition count if missing)")
    where.add_argument("--to-parquet", metavar="DIR", help="Parquet directory (local path or Hadoop URI)")
    p.add_argument("--retention-ms", type=int, default=-1,
                   help="retention.ms of a newly created archive topic (default -1: keep forever)")
    p.add_argument("--retention-bytes", type=int, default=None, help="retention.bytes of a new archive topic")
    p.add_argument("--topic-config", action="append", default=[], metavar="KEY=VALUE",
                   help="another config of a new archive topic (repeatable)")
    common.add_stream_args(p)
    common.add_spark_args(p)
    return p


def archive_topic_configs(args: argparse.Namespace) -> dict[str, str]:
    configs = {"retention.ms": str(args.retention_ms)}
    if args.retention_bytes is not None:
        configs["retention.bytes"] = str(args.retention_bytes)
    configs.update(common.parse_key_values(args.topic_config, "--topic-config"))
    return configs


def run(args: argparse.Namespace) -> int:
    """Start the archive and wait for it; returns the number of records archived."""
    from pyspark.sql import functions as F

    subscribe = common.subscription(args.topic, args.pattern)
    spark = common.build_session(f"pykafkad-{NAME}", args)
    source = common.read_stream(spark, args, args.bootstrap_servers, subscribe)
    if args.to_topic:
        with common.KafkaAdmin(spark, args.bootstrap_servers, args) as admin:
            partitions = max((admin.partition_count(t) for t in (args.topic or "").split(",") if t), default=1)
            if admin.ensure_topic(args.to_topic, partitions, archive_topic_configs(args)):
                print(f"[{NAME}] created {args.to_topic}: {partitions} partition(s), "
                      f"{archive_topic_configs(args)}", flush=True)
        stamp = F.struct(F.lit(SOURCE_TIMESTAMP_HEADER).alias("key"),
                         F.unix_millis("timestamp").cast("string").cast("binary").alias("value"))
        headers = F.concat(F.coalesce("headers", F.array().cast(source.schema["headers"].dataType)),
                           F.array(stamp))
        out = source.select("key", "value", headers.alias("headers"), "partition")
        writer = (out.writeStream.format("kafka").options(**common.kafka_options(args.bootstrap_servers, args))
                  .option("topic", args.to_topic))
    else:
        out = source.select("topic", "partition", "offset", "timestamp", "key", "value", "headers",
                            F.date_format("timestamp", "yyyy-MM-dd").alias("date"))
        writer = out.writeStream.format("parquet").option("path", args.to_parquet).partitionBy("date")
    query = common.start_stream(writer, args, NAME)
    return common.run_query(query, NAME, args.timeout)


def main(argv: list[str] | None = None) -> int:
    def body(a: list[str] | None) -> int:
        run(build_parser().parse_args(a))
        return 0

    return common.run_main(body, argv)


if __name__ == "__main__":
    sys.exit(main())
