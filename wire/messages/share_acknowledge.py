# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ShareAcknowledge API (key 79): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ShareAcknowledgeRequest",
    valid=Versions(1, 2),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("member_id", "string", Versions(0), nullable=Versions(0)),
        Field("share_session_epoch", "int32", Versions(0)),
        Field("is_renew_ack", "bool", Versions(2)),
        Field("topics", ArrayOf(Struct("AcknowledgeTopic", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("AcknowledgePartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("acknowledgement_batches", ArrayOf(Struct("AcknowledgementBatch", (
                    Field("first_offset", "int64", Versions(0)),
                    Field("last_offset", "int64", Versions(0)),
                    Field("acknowledge_types", ArrayOf("int8"), Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ShareAcknowledgeResponse",
    valid=Versions(1, 2),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("acquisition_lock_timeout_ms", "int32", Versions(2)),
        Field("responses", ArrayOf(Struct("ShareAcknowledgeTopicResponse", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
                Field("current_leader", Struct("LeaderIdAndEpoch", (
                    Field("leader_id", "int32", Versions(0)),
                    Field("leader_epoch", "int32", Versions(0)),
                )), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("node_endpoints", ArrayOf(Struct("NodeEndpoint", (
            Field("node_id", "int32", Versions(0)),
            Field("host", "string", Versions(0)),
            Field("port", "int32", Versions(0)),
            Field("rack", "string", Versions(0), nullable=Versions(0), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=79,
    name="ShareAcknowledge",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
