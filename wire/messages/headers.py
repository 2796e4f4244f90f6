# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the request and response headers."""

from wire.schema import NEVER, Field, MessageSchema, Versions

REQUEST_HEADER = MessageSchema(
    name="RequestHeader",
    valid=Versions(1, 2),
    flexible=Versions(2),
    fields=(
        Field("request_api_key", "int16", Versions(0)),
        Field("request_api_version", "int16", Versions(0)),
        Field("correlation_id", "int32", Versions(0)),
        Field("client_id", "string", Versions(1), nullable=Versions(1), flexible=NEVER),
    ),
)

RESPONSE_HEADER = MessageSchema(
    name="ResponseHeader",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("correlation_id", "int32", Versions(0)),
    ),
)
