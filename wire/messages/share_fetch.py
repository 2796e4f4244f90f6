# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ShareFetch API (key 78): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ShareFetchRequest",
    valid=Versions(1, 2),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("member_id", "string", Versions(0), nullable=Versions(0)),
        Field("share_session_epoch", "int32", Versions(0)),
        Field("max_wait_ms", "int32", Versions(0)),
        Field("min_bytes", "int32", Versions(0)),
        Field("max_bytes", "int32", Versions(0), default=2147483647),
        Field("max_records", "int32", Versions(1)),
        Field("batch_size", "int32", Versions(1)),
        Field("share_acquire_mode", "int8", Versions(2)),
        Field("is_renew_ack", "bool", Versions(2)),
        Field("topics", ArrayOf(Struct("FetchTopic", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("FetchPartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("partition_max_bytes", "int32", Versions(0, 0)),
                Field("acknowledgement_batches", ArrayOf(Struct("AcknowledgementBatch", (
                    Field("first_offset", "int64", Versions(0)),
                    Field("last_offset", "int64", Versions(0)),
                    Field("acknowledge_types", ArrayOf("int8"), Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("forgotten_topics_data", ArrayOf(Struct("ForgottenTopic", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ShareFetchResponse",
    valid=Versions(1, 2),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("acquisition_lock_timeout_ms", "int32", Versions(1)),
        Field("responses", ArrayOf(Struct("ShareFetchableTopicResponse", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
                Field("acknowledge_error_code", "int16", Versions(0)),
                Field("acknowledge_error_message", "string", Versions(0), nullable=Versions(0), default=None),
                Field("current_leader", Struct("LeaderIdAndEpoch", (
                    Field("leader_id", "int32", Versions(0)),
                    Field("leader_epoch", "int32", Versions(0)),
                )), Versions(0)),
                Field("records", "records", Versions(0), nullable=Versions(0, 0)),
                Field("acquired_records", ArrayOf(Struct("AcquiredRecords", (
                    Field("first_offset", "int64", Versions(0)),
                    Field("last_offset", "int64", Versions(0)),
                    Field("delivery_count", "int16", Versions(0)),
                ))), Versions(0)),
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
    api_key=78,
    name="ShareFetch",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
