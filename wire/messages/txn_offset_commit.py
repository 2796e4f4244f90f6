# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the TxnOffsetCommit API (key 28): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="TxnOffsetCommitRequest",
    valid=Versions(0, 6),
    flexible=Versions(3),
    fields=(
        Field("transactional_id", "string", Versions(0)),
        Field("group_id", "string", Versions(0)),
        Field("producer_id", "int64", Versions(0)),
        Field("producer_epoch", "int16", Versions(0)),
        Field("generation_id_or_member_epoch", "int32", Versions(3), default=-1),
        Field("member_id", "string", Versions(3)),
        Field("group_instance_id", "string", Versions(3), nullable=Versions(3), default=None),
        Field("topics", ArrayOf(Struct("TxnOffsetCommitRequestTopic", (
            Field("name", "string", Versions(0, 5)),
            Field("topic_id", "uuid", Versions(6)),
            Field("partitions", ArrayOf(Struct("TxnOffsetCommitRequestPartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("committed_offset", "int64", Versions(0)),
                Field("committed_leader_epoch", "int32", Versions(2), default=-1),
                Field("committed_metadata", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="TxnOffsetCommitResponse",
    valid=Versions(0, 6),
    flexible=Versions(3),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("topics", ArrayOf(Struct("TxnOffsetCommitResponseTopic", (
            Field("name", "string", Versions(0, 5)),
            Field("topic_id", "uuid", Versions(6)),
            Field("partitions", ArrayOf(Struct("TxnOffsetCommitResponsePartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=28,
    name="TxnOffsetCommit",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
