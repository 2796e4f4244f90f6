# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeTopicPartitions API (key 75): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeTopicPartitionsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("topics", ArrayOf(Struct("TopicRequest", (
            Field("name", "string", Versions(0)),
        ))), Versions(0)),
        Field("response_partition_limit", "int32", Versions(0), default=2000),
        Field("cursor", Struct("Cursor", (
            Field("topic_name", "string", Versions(0)),
            Field("partition_index", "int32", Versions(0)),
        )), Versions(0), nullable=Versions(0), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeTopicPartitionsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("topics", ArrayOf(Struct("DescribeTopicPartitionsResponseTopic", (
            Field("error_code", "int16", Versions(0)),
            Field("name", "string", Versions(0), nullable=Versions(0)),
            Field("topic_id", "uuid", Versions(0)),
            Field("is_internal", "bool", Versions(0)),
            Field("partitions", ArrayOf(Struct("DescribeTopicPartitionsResponsePartition", (
                Field("error_code", "int16", Versions(0)),
                Field("partition_index", "int32", Versions(0)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0), default=-1),
                Field("replica_nodes", ArrayOf("int32"), Versions(0)),
                Field("isr_nodes", ArrayOf("int32"), Versions(0)),
                Field("eligible_leader_replicas", ArrayOf("int32"), Versions(0), nullable=Versions(0), default=None),
                Field("last_known_elr", ArrayOf("int32"), Versions(0), nullable=Versions(0), default=None),
                Field("offline_replicas", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
            Field("topic_authorized_operations", "int32", Versions(0), default=-2147483648),
        ))), Versions(0)),
        Field("next_cursor", Struct("Cursor", (
            Field("topic_name", "string", Versions(0)),
            Field("partition_index", "int32", Versions(0)),
        )), Versions(0), nullable=Versions(0), default=None),
    ),
)

API = ApiSchema(
    api_key=75,
    name="DescribeTopicPartitions",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
