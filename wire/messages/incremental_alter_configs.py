# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the IncrementalAlterConfigs API (key 44): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="IncrementalAlterConfigsRequest",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("resources", ArrayOf(Struct("AlterConfigsResource", (
            Field("resource_type", "int8", Versions(0)),
            Field("resource_name", "string", Versions(0)),
            Field("configs", ArrayOf(Struct("AlterableConfig", (
                Field("name", "string", Versions(0)),
                Field("config_operation", "int8", Versions(0)),
                Field("value", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("validate_only", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="IncrementalAlterConfigsResponse",
    valid=Versions(0, 1),
    flexible=Versions(1),
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
    api_key=44,
    name="IncrementalAlterConfigs",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
