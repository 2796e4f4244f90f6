# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterConfigs API (key 33): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterConfigsRequest",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("resources", ArrayOf(Struct("AlterConfigsResource", (
            Field("resource_type", "int8", Versions(0)),
            Field("resource_name", "string", Versions(0)),
            Field("configs", ArrayOf(Struct("AlterableConfig", (
                Field("name", "string", Versions(0)),
                Field("value", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("validate_only", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterConfigsResponse",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("responses", ArrayOf(Struct("AlterConfigsResourceResponse", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
            Field("resource_type", "int8", Versions(0)),
            Field("resource_name", "string", Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=33,
    name="AlterConfigs",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
