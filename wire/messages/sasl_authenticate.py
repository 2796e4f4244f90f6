# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the SaslAuthenticate API (key 36): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="SaslAuthenticateRequest",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("auth_bytes", "bytes", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="SaslAuthenticateResponse",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
        Field("auth_bytes", "bytes", Versions(0)),
        Field("session_lifetime_ms", "int64", Versions(1)),
    ),
)

API = ApiSchema(
    api_key=36,
    name="SaslAuthenticate",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
