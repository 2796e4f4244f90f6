# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DeleteShareGroupOffsets API (key 92): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DeleteShareGroupOffsetsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("topics", ArrayOf(Struct("DeleteShareGroupOffsetsRequestTopic", (
            Field("topic_name", "string", Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DeleteShareGroupOffsetsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("responses", ArrayOf(Struct("DeleteShareGroupOffsetsResponseTopic", (
            Field("topic_name", "string", Versions(0)),
            Field("topic_id", "uuid", Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=92,
    name="DeleteShareGroupOffsets",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
