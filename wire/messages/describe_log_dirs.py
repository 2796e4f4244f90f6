# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeLogDirs API (key 35): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeLogDirsRequest",
    valid=Versions(1, 5),
    flexible=Versions(2),
    fields=(
        Field("topics", ArrayOf(Struct("DescribableLogDirTopic", (
            Field("topic", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeLogDirsResponse",
    valid=Versions(1, 5),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(3)),
        Field("results", ArrayOf(Struct("DescribeLogDirsResult", (
            Field("error_code", "int16", Versions(0)),
            Field("log_dir", "string", Versions(0)),
            Field("topics", ArrayOf(Struct("DescribeLogDirsTopic", (
                Field("name", "string", Versions(0)),
                Field("partitions", ArrayOf(Struct("DescribeLogDirsPartition", (
                    Field("partition_index", "int32", Versions(0)),
                    Field("partition_size", "int64", Versions(0)),
                    Field("offset_lag", "int64", Versions(0)),
                    Field("is_future_key", "bool", Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
            Field("total_bytes", "int64", Versions(4), default=-1),
            Field("usable_bytes", "int64", Versions(4), default=-1),
            Field("is_cordoned", "bool", Versions(5)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=35,
    name="DescribeLogDirs",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
