# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the OffsetForLeaderEpoch API (key 23): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="OffsetForLeaderEpochRequest",
    valid=Versions(2, 4),
    flexible=Versions(4),
    fields=(
        Field("replica_id", "int32", Versions(3), default=-2),
        Field("topics", ArrayOf(Struct("OffsetForLeaderTopic", (
            Field("topic", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("OffsetForLeaderPartition", (
                Field("partition", "int32", Versions(0)),
                Field("current_leader_epoch", "int32", Versions(2), default=-1),
                Field("leader_epoch", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="OffsetForLeaderEpochResponse",
    valid=Versions(2, 4),
    flexible=Versions(4),
    fields=(
        Field("throttle_time_ms", "int32", Versions(2)),
        Field("topics", ArrayOf(Struct("OffsetForLeaderTopicResult", (
            Field("topic", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("EpochEndOffset", (
                Field("error_code", "int16", Versions(0)),
                Field("partition", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(1), default=-1),
                Field("end_offset", "int64", Versions(0), default=-1),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=23,
    name="OffsetForLeaderEpoch",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
