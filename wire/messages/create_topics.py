# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the CreateTopics API (key 19): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="CreateTopicsRequest",
    valid=Versions(2, 7),
    flexible=Versions(5),
    fields=(
        Field("topics", ArrayOf(Struct("CreatableTopic", (
            Field("name", "string", Versions(0)),
            Field("num_partitions", "int32", Versions(0)),
            Field("replication_factor", "int16", Versions(0)),
            Field("assignments", ArrayOf(Struct("CreatableReplicaAssignment", (
                Field("partition_index", "int32", Versions(0)),
                Field("broker_ids", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
            Field("configs", ArrayOf(Struct("CreatableTopicConfig", (
                Field("name", "string", Versions(0)),
                Field("value", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("timeout_ms", "int32", Versions(0), default=60000),
        Field("validate_only", "bool", Versions(1)),
    ),
)

RESPONSE = MessageSchema(
    name="CreateTopicsResponse",
    valid=Versions(2, 7),
    flexible=Versions(5),
    fields=(
        Field("throttle_time_ms", "int32", Versions(2)),
        Field("topics", ArrayOf(Struct("CreatableTopicResult", (
            Field("name", "string", Versions(0)),
            Field("topic_id", "uuid", Versions(7)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(1), nullable=Versions(0)),
            Field("topic_config_error_code", "int16", Versions(5), tag=0, tagged=Versions(5)),
            Field("num_partitions", "int32", Versions(5), default=-1),
            Field("replication_factor", "int16", Versions(5), default=-1),
            Field("configs", ArrayOf(Struct("CreatableTopicConfigs", (
                Field("name", "string", Versions(5)),
                Field("value", "string", Versions(5), nullable=Versions(5)),
                Field("read_only", "bool", Versions(5)),
                Field("config_source", "int8", Versions(5), default=-1),
                Field("is_sensitive", "bool", Versions(5)),
            ))), Versions(5), nullable=Versions(5)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=19,
    name="CreateTopics",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
