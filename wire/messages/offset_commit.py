# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the OffsetCommit API (key 8): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="OffsetCommitRequest",
    valid=Versions(2, 10),
    flexible=Versions(8),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("generation_id_or_member_epoch", "int32", Versions(1), default=-1),
        Field("member_id", "string", Versions(1)),
        Field("group_instance_id", "string", Versions(7), nullable=Versions(7), default=None),
        Field("retention_time_ms", "int64", Versions(2, 4), default=-1),
        Field("topics", ArrayOf(Struct("OffsetCommitRequestTopic", (
            Field("name", "string", Versions(0, 9)),
            Field("topic_id", "uuid", Versions(10)),
            Field("partitions", ArrayOf(Struct("OffsetCommitRequestPartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("committed_offset", "int64", Versions(0)),
                Field("committed_leader_epoch", "int32", Versions(6), default=-1),
                Field("committed_metadata", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="OffsetCommitResponse",
    valid=Versions(2, 10),
    flexible=Versions(8),
    fields=(
        Field("throttle_time_ms", "int32", Versions(3)),
        Field("topics", ArrayOf(Struct("OffsetCommitResponseTopic", (
            Field("name", "string", Versions(0, 9)),
            Field("topic_id", "uuid", Versions(10)),
            Field("partitions", ArrayOf(Struct("OffsetCommitResponsePartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=8,
    name="OffsetCommit",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
