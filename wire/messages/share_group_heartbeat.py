# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ShareGroupHeartbeat API (key 76): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ShareGroupHeartbeatRequest",
    valid=Versions(1, 1),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("member_id", "string", Versions(0)),
        Field("member_epoch", "int32", Versions(0)),
        Field("rack_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("subscribed_topic_names", ArrayOf("string"), Versions(0), nullable=Versions(0), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="ShareGroupHeartbeatResponse",
    valid=Versions(1, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("member_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("member_epoch", "int32", Versions(0)),
        Field("heartbeat_interval_ms", "int32", Versions(0)),
        Field("assignment", Struct("Assignment", (
            Field("topic_partitions", ArrayOf(Struct("TopicPartitions", (
                Field("topic_id", "uuid", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
        )), Versions(0), nullable=Versions(0), default=None),
    ),
)

API = ApiSchema(
    api_key=76,
    name="ShareGroupHeartbeat",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
