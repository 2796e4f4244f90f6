# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the GetTelemetrySubscriptions API (key 71): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="GetTelemetrySubscriptionsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("client_instance_id", "uuid", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="GetTelemetrySubscriptionsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("client_instance_id", "uuid", Versions(0)),
        Field("subscription_id", "int32", Versions(0)),
        Field("accepted_compression_types", ArrayOf("int8"), Versions(0)),
        Field("push_interval_ms", "int32", Versions(0)),
        Field("telemetry_max_bytes", "int32", Versions(0)),
        Field("delta_temporality", "bool", Versions(0)),
        Field("requested_metrics", ArrayOf("string"), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=71,
    name="GetTelemetrySubscriptions",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
