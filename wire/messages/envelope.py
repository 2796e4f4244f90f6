# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the Envelope API (key 58): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="EnvelopeRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("request_data", "bytes", Versions(0)),
        Field("request_principal", "bytes", Versions(0), nullable=Versions(0)),
        Field("client_host_address", "bytes", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="EnvelopeResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("response_data", "bytes", Versions(0), nullable=Versions(0), default=None),
        Field("error_code", "int16", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=58,
    name="Envelope",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
