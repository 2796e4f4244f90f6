# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ListConfigResources API (key 74): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ListConfigResourcesRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("resource_types", ArrayOf("int8"), Versions(1)),
    ),
)

RESPONSE = MessageSchema(
    name="ListConfigResourcesResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("config_resources", ArrayOf(Struct("ConfigResource", (
            Field("resource_name", "string", Versions(0)),
            Field("resource_type", "int8", Versions(1), default=16),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=74,
    name="ListConfigResources",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
