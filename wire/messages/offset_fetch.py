# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the OffsetFetch API (key 9): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="OffsetFetchRequest",
    valid=Versions(1, 10),
    flexible=Versions(6),
    fields=(
        Field("group_id", "string", Versions(0, 7)),
        Field("topics", ArrayOf(Struct("OffsetFetchRequestTopic", (
            Field("name", "string", Versions(0, 7)),
            Field("partition_indexes", ArrayOf("int32"), Versions(0, 7)),
        ))), Versions(0, 7), nullable=Versions(2, 7)),
        Field("groups", ArrayOf(Struct("OffsetFetchRequestGroup", (
            Field("group_id", "string", Versions(8)),
            Field("member_id", "string", Versions(9), nullable=Versions(9), default=None),
            Field("member_epoch", "int32", Versions(9), default=-1),
            Field("topics", ArrayOf(Struct("OffsetFetchRequestTopics", (
                Field("name", "string", Versions(8, 9)),
                Field("topic_id", "uuid", Versions(10)),
                Field("partition_indexes", ArrayOf("int32"), Versions(8)),
            ))), Versions(8), nullable=Versions(8)),
        ))), Versions(8)),
        Field("require_stable", "bool", Versions(7)),
    ),
)

RESPONSE = MessageSchema(
    name="OffsetFetchResponse",
    valid=Versions(1, 10),
    flexible=Versions(6),
    fields=(
        Field("throttle_time_ms", "int32", Versions(3)),
        Field("topics", ArrayOf(Struct("OffsetFetchResponseTopic", (
            Field("name", "string", Versions(0, 7)),
            Field("partitions", ArrayOf(Struct("OffsetFetchResponsePartition", (
                Field("partition_index", "int32", Versions(0, 7)),
                Field("committed_offset", "int64", Versions(0, 7)),
                Field("committed_leader_epoch", "int32", Versions(5, 7), default=-1),
                Field("metadata", "string", Versions(0, 7), nullable=Versions(0, 7)),
                Field("error_code", "int16", Versions(0, 7)),
            ))), Versions(0, 7)),
        ))), Versions(0, 7)),
        Field("error_code", "int16", Versions(2, 7)),
        Field("groups", ArrayOf(Struct("OffsetFetchResponseGroup", (
            Field("group_id", "string", Versions(8)),
            Field("topics", ArrayOf(Struct("OffsetFetchResponseTopics", (
                Field("name", "string", Versions(8, 9)),
                Field("topic_id", "uuid", Versions(10)),
                Field("partitions", ArrayOf(Struct("OffsetFetchResponsePartitions", (
                    Field("partition_index", "int32", Versions(8)),
                    Field("committed_offset", "int64", Versions(8)),
                    Field("committed_leader_epoch", "int32", Versions(8), default=-1),
                    Field("metadata", "string", Versions(8), nullable=Versions(8)),
                    Field("error_code", "int16", Versions(8)),
                ))), Versions(8)),
            ))), Versions(8)),
            Field("error_code", "int16", Versions(8)),
        ))), Versions(8)),
    ),
)

API = ApiSchema(
    api_key=9,
    name="OffsetFetch",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
