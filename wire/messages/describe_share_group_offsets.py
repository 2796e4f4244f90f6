# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeShareGroupOffsets API (key 90): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeShareGroupOffsetsRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("groups", ArrayOf(Struct("DescribeShareGroupOffsetsRequestGroup", (
            Field("group_id", "string", Versions(0)),
            Field("topics", ArrayOf(Struct("DescribeShareGroupOffsetsRequestTopic", (
                Field("topic_name", "string", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(0), nullable=Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeShareGroupOffsetsResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("groups", ArrayOf(Struct("DescribeShareGroupOffsetsResponseGroup", (
            Field("group_id", "string", Versions(0)),
            Field("topics", ArrayOf(Struct("DescribeShareGroupOffsetsResponseTopic", (
                Field("topic_name", "string", Versions(0)),
                Field("topic_id", "uuid", Versions(0)),
                Field("partitions", ArrayOf(Struct("DescribeShareGroupOffsetsResponsePartition", (
                    Field("partition_index", "int32", Versions(0)),
                    Field("start_offset", "int64", Versions(0)),
                    Field("leader_epoch", "int32", Versions(0)),
                    Field("lag", "int64", Versions(1), default=-1),
                    Field("error_code", "int16", Versions(0)),
                    Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
                ))), Versions(0)),
            ))), Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=90,
    name="DescribeShareGroupOffsets",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
