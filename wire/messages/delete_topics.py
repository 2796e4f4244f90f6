# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DeleteTopics API (key 20): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DeleteTopicsRequest",
    valid=Versions(1, 6),
    flexible=Versions(4),
    fields=(
        Field("topics", ArrayOf(Struct("DeleteTopicState", (
            Field("name", "string", Versions(6), nullable=Versions(6), default=None),
            Field("topic_id", "uuid", Versions(6)),
        ))), Versions(6)),
        Field("topic_names", ArrayOf("string"), Versions(0, 5)),
        Field("timeout_ms", "int32", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DeleteTopicsResponse",
    valid=Versions(1, 6),
    flexible=Versions(4),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("responses", ArrayOf(Struct("DeletableTopicResult", (
            Field("name", "string", Versions(0), nullable=Versions(6)),
            Field("topic_id", "uuid", Versions(6)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(5), nullable=Versions(5), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=20,
    name="DeleteTopics",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
