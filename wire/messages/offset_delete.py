# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the OffsetDelete API (key 47): request and response bodies."""

from wire.schema import NEVER, ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="OffsetDeleteRequest",
    valid=Versions(0, 0),
    flexible=NEVER,
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("topics", ArrayOf(Struct("OffsetDeleteRequestTopic", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("OffsetDeleteRequestPartition", (
                Field("partition_index", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="OffsetDeleteResponse",
    valid=Versions(0, 0),
    flexible=NEVER,
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("topics", ArrayOf(Struct("OffsetDeleteResponseTopic", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("OffsetDeleteResponsePartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=47,
    name="OffsetDelete",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
