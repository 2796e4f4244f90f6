"""The mirror pipeline: continuously copy a topic (or every topic matching a pattern) to another
topic, on the same or another cluster, keeping key, value, headers and partition.

Timestamps: Spark's Kafka sink cannot set a record's timestamp (its writer builds
``ProducerRecord(topic, partition, key, value, headers)``), so by default the copy is stamped
when written and the source timestamp travels in the header ``pykafkad.source.timestamp``
(milliseconds, decimal text).  ``--exact-timestamps`` keeps the timestamps themselves: each
micro-batch is then sent from the driver through Kafka's Java producer (idempotent, acks=all),
which suits moderate rates, not bulk copies.

Resumable: the checkpoint records the source offsets of every finished micro-batch.

    pykafkad pipeline mirror -b SRC:9092 --target-bootstrap-servers DST:9092 \\
        --topic orders --target-topic orders-copy --checkpoint /tmp/ckpt/orders-mirror
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

try:
    from pykafkad.pipelines import common
except ImportError:  # run as a script by spark-submit: common.py sits next to this file
    import common  # type: ignore[no-redef]

NAME = "mirror"
SOURCE_TIMESTAMP_HEADER = "pykafkad.source.timestamp"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykafkad pipeline mirror", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_kafka_args(p)
    p.add_argument("--target-bootstrap-servers", metavar="HOST:PORT[,...]",
                   help="cluster to copy to (default: the source cluster)")
    p.add_argument("--topic", help="source topic (or comma-separated topics)")
    p.add_argument("--pattern", help="source topics by regular expression (new matches are picked up)")
    p.add_argument("--target-topic", help="target topic (only with a single --topic)")
    p.add_argument("--target-prefix", default="",
                   help="target topic = PREFIX + source topic (for --pattern or several topics)")
    p.add_argument("--no-create", action="store_true",
                   help="do not create missing target topics (by default they get the source's "
                        "partition count, so every record keeps its partition)")
    p.add_argument("--exact-timestamps", action="store_true",
                   help="keep record timestamps exactly (driver-side Java producer, moderate rates)")
    common.add_stream_args(p)
    common.add_spark_args(p)
    return p


def _check(args: argparse.Namespace) -> None:
    common.subscription(args.topic, args.pattern)
    single = args.topic is not None and "," not in args.topic
    if args.target_topic and not single:
        raise common.PipelineError("--target-topic needs a single --topic; use --target-prefix for several")
    if not args.target_topic and not args.target_prefix:
        raise common.PipelineError("say where to copy: --target-topic NAME or --target-prefix PREFIX")
    target = args.target_bootstrap_servers or args.bootstrap_servers
    if target == args.bootstrap_servers and not args.target_prefix and args.target_topic == args.topic:
        raise common.PipelineError("source and target are the same topic on the same cluster")


def _target_of(args: argparse.Namespace, source: str) -> str:
    return args.target_topic or f"{args.target_prefix}{source}"


def _create_targets(spark: Any, args: argparse.Namespace, target_bootstrap: str) -> None:
    """Give each missing target topic the partition count of its source."""
    import re

    with common.KafkaAdmin(spark, args.bootstrap_servers, args) as source:
        names = source.topics()
        if args.pattern:
            sources = sorted(n for n in names if re.fullmatch(args.pattern, n))
        else:
            sources = [t.strip() for t in args.topic.split(",")]
        counts = {s: source.partition_count(s) for s in sources if s in names}
    with common.KafkaAdmin(spark, target_bootstrap, args) as target:
        for s, n in counts.items():
            if target.ensure_topic(_target_of(args, s), n):
                print(f"[{NAME}] created {_target_of(args, s)} with {n} partition(s)", flush=True)


def _exact_writer(spark: Any, args: argparse.Namespace, target_bootstrap: str) -> Any:
    """A foreachBatch function sending each row with its own timestamp through the Java producer."""
    jvm = spark._jvm  # noqa: SLF001 - py4j gateway to the connector's kafka-clients
    props = jvm.java.util.Properties()
    for key, value in common.kafka_options(target_bootstrap, args).items():
        props.setProperty(key[len("kafka."):], value)
    serializer = "org.apache.kafka.common.serialization.ByteArraySerializer"
    props.setProperty("key.serializer", serializer)
    props.setProperty("value.serializer", serializer)
    props.setProperty("enable.idempotence", "true")
    props.setProperty("acks", "all")
    producer_cls = jvm.org.apache.kafka.clients.producer.KafkaProducer
    record_cls = jvm.org.apache.kafka.clients.producer.ProducerRecord
    header_cls = jvm.org.apache.kafka.common.header.internals.RecordHeader

    def write(batch: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        rows = batch.select("topic", "partition", "key", "value", "headers",
                            F.unix_millis("timestamp").alias("ts")).toLocalIterator()
        producer = producer_cls(props)
        try:
            futures = []
            for row in rows:
                headers = jvm.java.util.ArrayList()
                for h in row.headers or []:
                    headers.add(header_cls(h.key, None if h.value is None else bytes(h.value)))
                key = None if row.key is None else bytes(row.key)
                value = None if row.value is None else bytes(row.value)
                record = record_cls(_target_of(args, row.topic), jvm.java.lang.Integer(row.partition),
                                    jvm.java.lang.Long(row.ts), key, value, headers)
                futures.append(producer.send(record))
            producer.flush()
            for f in futures:
                f.get(common.ADMIN_TIMEOUT_S, jvm.java.util.concurrent.TimeUnit.SECONDS)
        finally:
            producer.close()

    return write


def run(args: argparse.Namespace) -> int:
    """Start the mirror and wait for it; returns the number of records copied."""
    from pyspark.sql import functions as F

    _check(args)
    spark = common.build_session(f"pykafkad-{NAME}", args)
    target_bootstrap = args.target_bootstrap_servers or args.bootstrap_servers
    if not args.no_create:
        _create_targets(spark, args, target_bootstrap)
    source = common.read_stream(spark, args, args.bootstrap_servers,
                                common.subscription(args.topic, args.pattern))
    if args.exact_timestamps:
        writer = source.writeStream.foreachBatch(_exact_writer(spark, args, target_bootstrap))
    else:
        stamp = F.struct(F.lit(SOURCE_TIMESTAMP_HEADER).alias("key"),
                         F.unix_millis("timestamp").cast("string").cast("binary").alias("value"))
        headers = F.concat(F.coalesce(F.col("headers"), F.array().cast(source.schema["headers"].dataType)),
                           F.array(stamp))
        target = F.lit(args.target_topic) if args.target_topic else F.concat(F.lit(args.target_prefix), "topic")
        out = source.select(target.alias("topic"), "partition", "key", "value", headers.alias("headers"))
        writer = out.writeStream.format("kafka").options(**common.kafka_options(target_bootstrap, args))
    query = common.start_stream(writer, args, NAME)
    return common.run_query(query, NAME, args.timeout)


def main(argv: list[str] | None = None) -> int:
    def body(a: list[str] | None) -> int:
        run(build_parser().parse_args(a))
        return 0

    return common.run_main(body, argv)


if __name__ == "__main__":
    sys.exit(main())
