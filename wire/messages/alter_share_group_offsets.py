# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterShareGroupOffsets API (key 91): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterShareGroupOffsetsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("topics", ArrayOf(Struct("AlterShareGroupOffsetsRequestTopic", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("AlterShareGroupOffsetsRequestPartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("start_offset", "int64", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterShareGroupOffsetsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("responses", ArrayOf(Struct("AlterShareGroupOffsetsResponseTopic", (
            Field("topic_name", "string", Versions(0)),
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("AlterShareGroupOffsetsResponsePartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=91,
    name="AlterShareGroupOffsets",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
