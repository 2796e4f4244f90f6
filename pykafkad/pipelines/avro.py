"""The avro pipeline: continuously turn a topic of JSON records into a topic of Avro records in the
schema registry's wire format (magic byte 0, the 4-byte schema id, the Avro datum), which
Confluent's Avro deserializers and Spark's ``from_avro`` read.

The Avro schema is given (``--schema FILE.avsc``) or inferred from the JSON records already in the
topic (every field optional, default null, so that later versions can add fields); it is
registered under the output topic's value subject (TopicNameStrategy: ``<to-topic>-value``) with
the registry's compatibility check, before any record is written.  Each value is parsed with
Spark's ``from_json`` (a record that is not JSON stops the pipeline rather than being dropped) and
written with Spark's ``to_avro``; keys and headers are copied as they are.

    pykafkad pipeline avro -b localhost:9092 --topic orders-json --to-topic orders \\
        --registry-url http://localhost:8081 --checkpoint /tmp/ckpt/orders-avro
    pykafkad pipeline avro -b localhost:9092 --topic orders-json --to-topic orders \\
        --registry-url http://localhost:8081 --schema order.avsc --checkpoint /tmp/ckpt/orders-avro
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    from pykafkad.pipelines import common
except ImportError:  # run as a script by spark-submit: common.py sits next to this file
    import common  # type: ignore[no-redef]

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType, StructType

NAME = "avro"
REGISTRY_TIMEOUT_S = 30
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
MAGIC = b"\x00"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pykafkad pipeline avro", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_kafka_args(p)
    p.add_argument("--topic", required=True, help="the topic of JSON records")
    p.add_argument("--to-topic", required=True,
                   help="the Avro topic (created with the source's partition count if missing)")
    p.add_argument("--registry-url", required=True, metavar="URL",
                   help="the schema registry (pykafkad's or Confluent's), e.g. http://localhost:8081")
    p.add_argument("--registry-auth", metavar="USER:PASSWORD",
                   help="HTTP Basic credentials for a registry that asks for them")
    p.add_argument("--schema", type=Path, metavar="FILE.avsc",
                   help="the Avro schema of the values (default: inferred from the topic's JSON records)")
    p.add_argument("--record-name", help="name of an inferred schema's record (default: from --to-topic)")
    p.add_argument("--namespace", default="", help="namespace of an inferred schema's records")
    p.add_argument("--infer-from", type=int, default=1000, metavar="N",
                   help="records read from the start of the topic to infer the schema from (default 1000)")
    common.add_stream_args(p)
    common.add_spark_args(p)
    return p


# -- the schema -------------------------------------------------------------------------------------


def record_name(topic: str) -> str:
    """An Avro name from a topic name: ``orders-eu.v2`` -> ``OrdersEuV2``."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", topic) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Record"
    return name if not name[0].isdigit() else f"R{name}"


def avro_type(data_type: DataType, name: str, names: set[str]) -> Any:
    """The Avro type of a Spark SQL type, as Spark's ``to_avro`` writes it; a nested record is
    named after its field, made unique among ``names``."""
    from pyspark.sql import types as T

    simple = {T.LongType: "long", T.IntegerType: "int", T.ShortType: "int", T.ByteType: "int",
              T.DoubleType: "double", T.FloatType: "float", T.BooleanType: "boolean", T.StringType: "string",
              T.BinaryType: "bytes", T.NullType: "string"}
    for spark_type, avro in simple.items():
        if isinstance(data_type, spark_type):
            return avro
    if isinstance(data_type, T.TimestampType):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if isinstance(data_type, T.DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(data_type, T.DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": data_type.precision,
                "scale": data_type.scale}
    if isinstance(data_type, T.ArrayType):
        return {"type": "array", "items": _optional(avro_type(data_type.elementType, name, names),
                                                     data_type.containsNull, default=False)}
    if isinstance(data_type, T.MapType) and isinstance(data_type.keyType, T.StringType):
        return {"type": "map", "values": _optional(avro_type(data_type.valueType, name, names),
                                                    data_type.valueContainsNull, default=False)}
    if isinstance(data_type, T.StructType):
        unique, n = name, 1
        while unique in names:
            n += 1
            unique = f"{name}{n}"
        names.add(unique)
        fields = []
        for field in data_type.fields:
            inner = avro_type(field.dataType, record_name(field.name), names)
            fields.append({"name": field.name, **_optional(inner, field.nullable, default=True)})
        return {"type": "record", "name": unique, "fields": fields}
    raise common.PipelineError(f"no Avro type for Spark's {data_type.simpleString()}; give the schema with --schema")


def _optional(avro: Any, nullable: bool, default: bool) -> Any:
    """A field (``default``: a record field's ``type`` and ``default``) or an item that may be null."""
    if not nullable:
        return {"type": avro} if default else avro
    union = ["null", avro]
    return {"type": union, "default": None} if default else union


def inferred_schema(spark: SparkSession, args: argparse.Namespace) -> tuple[str, StructType]:
    """An Avro schema (JSON text) and the Spark type of the values, from the first ``--infer-from``
    JSON records of the topic."""
    from pyspark.sql import functions as F

    sample = (common.read_batch(spark, args, {"subscribe": args.topic}).orderBy("partition", "offset")
              .limit(args.infer_from).select(F.col("value").cast("string").alias("json")).collect())
    documents = [row.json for row in sample if row.json is not None]
    if not documents:
        raise common.PipelineError(f"topic {args.topic!r} has no records to infer a schema from; write some "
                                   "first, or give the schema with --schema FILE.avsc")
    # One array of every sampled document: Spark infers the element type that fits them all.
    ddl = spark.range(1).select(F.schema_of_json(F.lit("[" + ",".join(documents) + "]"))).first()[0]
    array = spark.range(0).select(F.from_json(F.lit("[]"), ddl).alias("v")).schema["v"].dataType
    from pyspark.sql.types import ArrayType, StructType

    if not isinstance(array, ArrayType) or not isinstance(array.elementType, StructType):
        raise common.PipelineError(f"the records of {args.topic!r} are not all JSON objects ({ddl}); give "
                                   "the schema with --schema FILE.avsc")
    struct = array.elementType
    schema = avro_type(struct, args.record_name or record_name(args.to_topic), set())
    if args.namespace:
        schema["namespace"] = args.namespace
    return json.dumps(schema), struct


def given_schema(spark: SparkSession, path: Path) -> tuple[str, StructType]:
    """The Avro schema in ``path`` and the Spark type Spark reads it as."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.types import StructType

    try:
        text = path.read_text()
        json.loads(text)
    except (OSError, ValueError) as e:
        raise common.PipelineError(f"--schema {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        struct = spark.range(0).select(from_avro(F.lit(None).cast("binary"), text).alias("v")).schema["v"].dataType
    except Exception as e:  # noqa: BLE001 - Spark's AnalysisException or a Py4J error, both say why
        raise common.PipelineError(f"--schema {path} is not an Avro schema Spark can use: "
                                   f"{common.first_line(e)}") from None
    if not isinstance(struct, StructType):
        raise common.PipelineError(f"--schema {path} must be an Avro record (JSON objects become records)")
    return text, struct


# -- the registry -----------------------------------------------------------------------------------


def register(url: str, subject: str, schema: str, auth: str | None) -> int:
    """Register ``schema`` under ``subject`` (the registry checks compatibility); its id."""
    request = urllib.request.Request(f"{url.rstrip('/')}/subjects/{urllib.request.quote(subject, safe='')}/versions",
                                     data=json.dumps({"schema": schema}).encode(), method="POST",
                                     headers={"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE})
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=REGISTRY_TIMEOUT_S) as answer:
            return int(json.loads(answer.read())["id"])
    except urllib.error.HTTPError as e:
        try:
            message = json.loads(e.read()).get("message", e.reason)
        except ValueError:
            message = e.reason
        advice = "; the new schema must be compatible with the subject's versions" if e.code == 409 else ""
        raise common.PipelineError(f"the registry refused the schema of {subject} ({e.code}): {message}"
                                   f"{advice}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise common.PipelineError(f"cannot reach the schema registry at {url}: {reason}; is it running "
                                   "(schema.registry.listener, or `pykafkad registry`)?") from None


# -- the pipeline -----------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """Register the schema, then start the conversion and wait for it; returns the records written."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    spark = common.build_session(f"pykafkad-{NAME}", args)
    with common.KafkaAdmin(spark, args.bootstrap_servers, args) as admin:
        partitions = admin.partition_count(args.topic)
        if args.schema is not None:
            schema, struct = given_schema(spark, args.schema)
        else:
            schema, struct = inferred_schema(spark, args)
        subject = f"{args.to_topic}-value"
        schema_id = register(args.registry_url, subject, schema, args.registry_auth)
        print(f"[{NAME}] schema id {schema_id} registered under {subject}: {schema}", flush=True)
        if admin.ensure_topic(args.to_topic, partitions):
            print(f"[{NAME}] created {args.to_topic}: {partitions} partition(s)", flush=True)
    source = common.read_stream(spark, args, args.bootstrap_servers, {"subscribe": args.topic})
    parsed = F.from_json(F.col("value").cast("string"), struct, {"mode": "FAILFAST"})
    framed = F.concat(F.lit(bytearray(MAGIC + schema_id.to_bytes(4, "big"))), to_avro(parsed, schema))
    out = source.select("key", framed.alias("value"), "headers", "partition")
    writer = (out.writeStream.format("kafka").options(**common.kafka_options(args.bootstrap_servers, args))
              .option("topic", args.to_topic))
    query = common.start_stream(writer, args, NAME)
    return common.run_query(query, NAME, args.timeout)


def main(argv: list[str] | None = None) -> int:
    def body(a: list[str] | None) -> int:
        run(build_parser().parse_args(a))
        return 0

    return common.run_main(body, argv)


if __name__ == "__main__":
    sys.exit(main())
