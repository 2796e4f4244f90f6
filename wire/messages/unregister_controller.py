# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the UnregisterController API (key 94): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="UnregisterControllerRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("controller_id", "int32", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="UnregisterControllerResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
    ),
)

API = ApiSchema(
    api_key=94,
    name="UnregisterController",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
