# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ListOffsets API (key 2): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ListOffsetsRequest",
    valid=Versions(1, 11),
    flexible=Versions(6),
    fields=(
        Field("replica_id", "int32", Versions(0)),
        Field("isolation_level", "int8", Versions(2)),
        Field("topics", ArrayOf(Struct("ListOffsetsTopic", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("ListOffsetsPartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("current_leader_epoch", "int32", Versions(4), default=-1),
                Field("timestamp", "int64", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("timeout_ms", "int32", Versions(10)),
    ),
)

RESPONSE = MessageSchema(
    name="ListOffsetsResponse",
    valid=Versions(1, 11),
    flexible=Versions(6),
    fields=(
        Field("throttle_time_ms", "int32", Versions(2)),
        Field("topics", ArrayOf(Struct("ListOffsetsTopicResponse", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("ListOffsetsPartitionResponse", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("timestamp", "int64", Versions(1), default=-1),
                Field("offset", "int64", Versions(1), default=-1),
                Field("leader_epoch", "int32", Versions(4), default=-1),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=2,
    name="ListOffsets",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
