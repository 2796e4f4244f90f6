# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ShareGroupDescribe API (key 77): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ShareGroupDescribeRequest",
    valid=Versions(1, 1),
    flexible=Versions(0),
    fields=(
        Field("group_ids", ArrayOf("string"), Versions(0)),
        Field("include_authorized_operations", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ShareGroupDescribeResponse",
    valid=Versions(1, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("groups", ArrayOf(Struct("DescribedGroup", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
            Field("group_id", "string", Versions(0)),
            Field("group_state", "string", Versions(0)),
            Field("group_epoch", "int32", Versions(0)),
            Field("assignment_epoch", "int32", Versions(0)),
            Field("assignor_name", "string", Versions(0)),
            Field("members", ArrayOf(Struct("Member", (
                Field("member_id", "string", Versions(0)),
                Field("rack_id", "string", Versions(0), nullable=Versions(0), default=None),
                Field("member_epoch", "int32", Versions(0)),
                Field("client_id", "string", Versions(0)),
                Field("client_host", "string", Versions(0)),
                Field("subscribed_topic_names", ArrayOf("string"), Versions(0)),
                Field("assignment", Struct("Assignment", (
                    Field("topic_partitions", ArrayOf(Struct("TopicPartitions", (
                        Field("topic_id", "uuid", Versions(0)),
                        Field("topic_name", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                )), Versions(0)),
            ))), Versions(0)),
            Field("authorized_operations", "int32", Versions(0), default=-2147483648),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=77,
    name="ShareGroupDescribe",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
