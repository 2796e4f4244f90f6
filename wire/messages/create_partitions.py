# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the CreatePartitions API (key 37): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="CreatePartitionsRequest",
    valid=Versions(0, 3),
    flexible=Versions(2),
    fields=(
        Field("topics", ArrayOf(Struct("CreatePartitionsTopic", (
            Field("name", "string", Versions(0)),
            Field("count", "int32", Versions(0)),
            Field("assignments", ArrayOf(Struct("CreatePartitionsAssignment", (
                Field("broker_ids", ArrayOf("int32"), Versions(0)),
            ))), Versions(0), nullable=Versions(0)),
        ))), Versions(0)),
        Field("timeout_ms", "int32", Versions(0)),
        Field("validate_only", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="CreatePartitionsResponse",
    valid=Versions(0, 3),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("results", ArrayOf(Struct("CreatePartitionsTopicResult", (
            Field("name", "string", Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=37,
    name="CreatePartitions",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
