# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the PushTelemetry API (key 72): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="PushTelemetryRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("client_instance_id", "uuid", Versions(0)),
        Field("subscription_id", "int32", Versions(0)),
        Field("terminating", "bool", Versions(0)),
        Field("compression_type", "int8", Versions(0)),
        Field("metrics", "bytes", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="PushTelemetryResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=72,
    name="PushTelemetry",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
