# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ExpireDelegationToken API (key 40): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="ExpireDelegationTokenRequest",
    valid=Versions(1, 2),
    flexible=Versions(2),
    fields=(
        Field("hmac", "bytes", Versions(0)),
        Field("expiry_time_period_ms", "int64", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ExpireDelegationTokenResponse",
    valid=Versions(1, 2),
    flexible=Versions(2),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("expiry_timestamp_ms", "int64", Versions(0)),
        Field("throttle_time_ms", "int32", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=40,
    name="ExpireDelegationToken",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
