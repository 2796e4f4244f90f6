"""What every pipeline shares: command-line options, the SparkSession, Kafka reader and writer
options, a small Kafka admin helper, and the progress display of running queries.

This module imports only pyspark and the standard library (never the broker), so a pipeline
runs on any Spark cluster with ``spark-submit pykafkad/pipelines/NAME.py ...``.  Pipelines use
Spark's built-in functions only (no Python UDFs), so executors never need this code.

Admin calls (partition counts, creating topics with their own configs) go through the Java
``kafka-clients`` that Spark's Kafka connector already puts on the driver's classpath.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter, StreamingQuery

#: The connector coordinate; the version always follows the running pyspark.
CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"
#: Spark's Avro functions (the avro pipeline), at the same version.
AVRO_FUNCTIONS = "org.apache.spark:spark-avro_2.13"
#: Where `make spark-deps` lays the connector's jars in a source checkout.
CHECKOUT_JARS_DIR = Path(__file__).resolve().parents[2] / ".cache" / "spark" / "jars"
ADMIN_TIMEOUT_S = 30


class PipelineError(Exception):
    """A pipeline cannot run as asked; the message says what to do instead."""


# -- command line -----------------------------------------------------------------------------------


def parse_key_values(items: Iterable[str], what: str) -> dict[str, str]:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; a malformed item is a PipelineError."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise PipelineError(f"{what} must look like KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def add_spark_args(parser: argparse.ArgumentParser) -> None:
    """Options about where Spark runs and how long a run may take."""
    g = parser.add_argument_group("Spark")
    g.add_argument("--master", help="Spark master when not launched by spark-submit (default local[*])")
    g.add_argument("--jars-dir", type=Path,
                   help="directory of the Kafka connector's jars (default $SPARK_JARS_DIR, then "
                        ".cache/spark/jars of a pykafkad checkout, else Maven via spark.jars.packages)")
    g.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Spark config (repeatable), like spark-submit --conf")
    g.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="give up (and fail) after this long; default: no limit for streams, "
                        "stop them with Ctrl-C")


def add_kafka_args(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """The cluster to talk to, plus raw Kafka client settings for both reading and writing."""
    g = parser.add_argument_group("Kafka")
    g.add_argument("--bootstrap-servers", "-b", required=required, metavar="HOST:PORT[,...]",
                   help="the Kafka (or pykafkad) cluster to read from")
    g.add_argument("--kafka-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a Kafka client setting for every reader and writer (repeatable), e.g. "
                        "security.protocol=SSL; passed to Spark as kafka.KEY")


def add_stream_args(parser: argparse.ArgumentParser) -> None:
    """Options of the continuous pipelines: checkpoint, trigger, rate limit, data-loss policy."""
    g = parser.add_argument_group("streaming")
    g.add_argument("--checkpoint", required=True, metavar="DIR",
                   help="checkpoint directory (local path or any Hadoop URI); a restarted run "
                        "continues from it with no loss and no duplicates")
    g.add_argument("--starting-offsets", default="earliest",
                   help="where a fresh run (no checkpoint yet) starts: earliest, latest or JSON")
    g.add_argument("--max-offsets-per-trigger", type=int, default=None, metavar="N",
                   help="at most N records per micro-batch")
    g.add_argument("--available-now", action="store_true",
                   help="copy what is there now (in micro-batches) and stop, instead of running forever")
    g.add_argument("--trigger-interval", default="5 seconds",
                   help="micro-batch interval of a continuous run (default: 5 seconds)")
    g.add_argument("--fail-on-data-loss", choices=["true", "false"], default="true",
                   help="fail when records the checkpoint expects are gone (retention, topic "
                        "recreated), as Spark does by default; false skips the gap with a warning")


# -- session --------------------------------------------------------------------------------------


def _launched_by_spark_submit() -> bool:
    # spark-submit starts the JVM first and hands Python the gateway port.
    return "PYSPARK_GATEWAY_PORT" in os.environ


def connector_jars(jars_dir: Path | None) -> list[str]:
    """The connector's jars from an explicit dir, $SPARK_JARS_DIR, or a checkout's .cache."""
    candidates = [jars_dir] if jars_dir is not None else []
    if os.environ.get("SPARK_JARS_DIR"):
        candidates.append(Path(os.environ["SPARK_JARS_DIR"]))
    candidates.append(CHECKOUT_JARS_DIR)
    for d in candidates:
        jars = sorted(str(p) for p in d.glob("*.jar")) if d.is_dir() else []
        if jars:
            return jars
        if d is jars_dir:
            raise PipelineError(f"--jars-dir {d} holds no jars; run `make spark-deps` or point it at "
                                "the spark-sql-kafka-0-10 jars")
    return []


def build_session(app_name: str, args: argparse.Namespace) -> SparkSession:
    """The active SparkSession, or a new one with the Kafka connector on its classpath.

    Under spark-submit the JVM is already up and the user's --packages/--jars rule; otherwise
    the connector comes from local jars (no network) or, failing that, from Maven.
    """
    try:
        import pyspark
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise PipelineError("pyspark is not installed: `pip install 'pykafkad[spark]'` "
                            "(or `make spark-deps` in a checkout)") from e
    builder = SparkSession.builder.appName(app_name)
    if not _launched_by_spark_submit() and SparkSession.getActiveSession() is None:
        builder = builder.master(args.master or "local[*]")
        jars = connector_jars(args.jars_dir)
        if jars:
            builder = builder.config("spark.jars", ",".join(jars))
        else:
            builder = builder.config("spark.jars.packages", ",".join(
                f"{package}:{pyspark.__version__}" for package in (CONNECTOR, AVRO_FUNCTIONS)))
    for key, value in parse_key_values(args.conf, "--conf").items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


# -- Kafka options --------------------------------------------------------------------------------


def kafka_options(bootstrap: str, args: argparse.Namespace) -> dict[str, str]:
    """``kafka.*`` options for a reader or writer of the cluster at `bootstrap`."""
    opts = {"kafka.bootstrap.servers": bootstrap}
    for key, value in parse_key_values(args.kafka_option, "--kafka-option").items():
        opts[key if key.startswith("kafka.") else f"kafka.{key}"] = value
    return opts


def subscription(topic: str | None, pattern: str | None) -> dict[str, str]:
    """The subscribe / subscribePattern option for one topic, a comma list, or a regex."""
    if (topic is None) == (pattern is None):
        raise PipelineError("give exactly one of --topic and --pattern")
    return {"subscribe": topic} if topic is not None else {"subscribePattern": pattern}  # type: ignore[dict-item]


def read_stream(spark: SparkSession, args: argparse.Namespace, bootstrap: str,
                subscribe: Mapping[str, str]) -> DataFrame:
    """A streaming Kafka source with headers, honouring the stream options of `args`."""
    reader: DataStreamReader = spark.readStream.format("kafka")
    opts = {**kafka_options(bootstrap, args), **subscribe,
            "includeHeaders": "true",
            "startingOffsets": args.starting_offsets,
            "failOnDataLoss": args.fail_on_data_loss}
    if args.max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(args.max_offsets_per_trigger)
    return reader.options(**opts).load()


def read_batch(spark: SparkSession, args: argparse.Namespace, subscribe: Mapping[str, str],
               extra: Mapping[str, str] | None = None) -> DataFrame:
    """A batch Kafka read (earliest to latest unless `extra` says otherwise), with headers."""
    opts = {**kafka_options(args.bootstrap_servers, args), **subscribe,
            "includeHeaders": "true", "startingOffsets": "earliest", "endingOffsets": "latest",
            **(extra or {})}
    return spark.read.format("kafka").options(**opts).load()


def start_stream(writer: DataStreamWriter, args: argparse.Namespace, name: str) -> StreamingQuery:
    """Start `writer` with the checkpoint and trigger that `args` ask for."""
    writer = writer.option("checkpointLocation", args.checkpoint).queryName(name)
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=args.trigger_interval)
    return writer.start()


# -- admin (driver side, through the connector's kafka-clients) -----------------------------------


class KafkaAdmin:
    """Kafka's Java Admin client, reached through Spark's JVM gateway on the driver."""

    def __init__(self, spark: SparkSession, bootstrap: str, args: argparse.Namespace) -> None:
        self._jvm = spark._jvm  # noqa: SLF001 - py4j gateway; the only way to reach kafka-clients
        props = self._jvm.java.util.Properties()
        for key, value in kafka_options(bootstrap, args).items():
            props.setProperty(key[len("kafka."):], value)
        from py4j.protocol import Py4JError

        try:
            self._admin = self._jvm.org.apache.kafka.clients.admin.Admin.create(props)
        except Py4JError as e:
            raise PipelineError(f"cannot reach the Kafka admin client ({e}); is the connector's "
                                "kafka-clients jar on the driver classpath?") from e
        self._seconds = self._jvm.java.util.concurrent.TimeUnit.SECONDS

    def __enter__(self) -> KafkaAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self._admin.close()

    def _list(self, items: Iterable[Any]) -> Any:
        out = self._jvm.java.util.ArrayList()
        for item in items:
            out.add(item)
        return out

    def topics(self) -> set[str]:
        names = self._admin.listTopics().names().get(ADMIN_TIMEOUT_S, self._seconds)
        return {str(n) for n in names}

    def partition_count(self, topic: str) -> int:
        """Partitions of `topic`; PipelineError if it does not exist."""
        if topic not in self.topics():
            raise PipelineError(f"topic {topic!r} does not exist")
        described = self._admin.describeTopics(self._list([topic])).allTopicNames()
        return int(described.get(ADMIN_TIMEOUT_S, self._seconds).get(topic).partitions().size())

    def ensure_topic(self, topic: str, partitions: int, configs: Mapping[str, str] | None = None) -> bool:
        """Create `topic` unless it exists; True if created.  An existing topic is left alone."""
        if topic in self.topics():
            return False
        optional = self._jvm.java.util.Optional
        new = self._jvm.org.apache.kafka.clients.admin.NewTopic(topic, optional.of(partitions), optional.empty())
        if configs:
            jconfigs = self._jvm.java.util.HashMap()
            for key, value in configs.items():
                jconfigs.put(key, value)
            new = new.configs(jconfigs)
        self._admin.createTopics(self._list([new])).all().get(ADMIN_TIMEOUT_S, self._seconds)
        return True


# -- progress -------------------------------------------------------------------------------------


def _offsets_text(end_offset: Any) -> str:
    """``{"t": {"0": 5, "1": 7}}`` (a dict or its JSON text) -> ``t[0]=5 t[1]=7``."""
    if isinstance(end_offset, str):
        try:
            end_offset = json.loads(end_offset)
        except ValueError:
            return end_offset
    if not isinstance(end_offset, dict):
        return str(end_offset)
    parts = []
    for topic, partitions in sorted(end_offset.items()):
        if isinstance(partitions, dict):
            parts += [f"{topic}[{p}]={o}" for p, o in sorted(partitions.items(), key=lambda x: int(x[0]))]
    return " ".join(parts)


def progress_line(name: str, progress: Mapping[str, Any]) -> str:
    """One line for one finished micro-batch, from a StreamingQueryProgress dict."""
    rows = progress.get("numInputRows", 0)
    rate = progress.get("processedRowsPerSecond") or 0.0
    offsets = " ".join(_offsets_text(s.get("endOffset")) for s in progress.get("sources", []))
    return f"[{name}] batch {progress.get('batchId')}: {rows} rows ({rate:.1f} rows/s) up to {offsets}"


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def run_query(query: StreamingQuery, name: str, timeout: float | None, poll_s: float = 0.5,
              out: Any = None) -> int:
    """Wait for `query`, printing a line per micro-batch; returns the number of rows processed.

    An available-now query ends by itself; a continuous one runs until Ctrl-C or `timeout`.
    A timeout stops the query and raises PipelineError, so a hang never goes unnoticed.
    """
    from pyspark.errors import StreamingQueryException

    out = out or sys.stdout
    deadline = None if timeout is None else time.monotonic() + timeout
    last_batch = -1
    rows = 0

    def report() -> None:
        nonlocal last_batch, rows
        for p in query.recentProgress:
            if p["batchId"] > last_batch:
                last_batch = p["batchId"]
                rows += int(p.get("numInputRows", 0))
                print(progress_line(name, p), file=out, flush=True)

    print(f"[{name}] started (query id {query.id}); Ctrl-C stops it, the checkpoint keeps its place",
          file=out, flush=True)
    try:
        while True:
            try:
                if query.awaitTermination(poll_s):
                    break
            except StreamingQueryException as e:
                report()
                raise PipelineError(f"{name} failed: {first_line(e)}") from e
            report()
            if deadline is not None and time.monotonic() > deadline:
                query.stop()
                raise PipelineError(f"{name} still running after {timeout}s; stopped it (raise --timeout, "
                                    "or use --available-now for a bounded run)")
    except KeyboardInterrupt:
        print(f"[{name}] interrupted; stopping (the next run resumes from the checkpoint)", file=out, flush=True)
        query.stop()
    report()
    print(f"[{name}] stopped after {rows} rows", file=out, flush=True)
    return rows


def run_main(main_fn: Any, argv: list[str] | None) -> int:
    """Run a pipeline's body, turning PipelineError into a one-line message and exit code 2."""
    try:
        return int(main_fn(argv) or 0)
    except PipelineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
