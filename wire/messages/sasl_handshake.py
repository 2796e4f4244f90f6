# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the SaslHandshake API (key 17): request and response bodies."""

from wire.schema import NEVER, ApiSchema, ArrayOf, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="SaslHandshakeRequest",
    valid=Versions(0, 1),
    flexible=NEVER,
    fields=(
        Field("mechanism", "string", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="SaslHandshakeResponse",
    valid=Versions(0, 1),
    flexible=NEVER,
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("mechanisms", ArrayOf("string"), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=17,
    name="SaslHandshake",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
