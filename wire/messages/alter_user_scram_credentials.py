# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterUserScramCredentials API (key 51): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterUserScramCredentialsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("deletions", ArrayOf(Struct("ScramCredentialDeletion", (
            Field("name", "string", Versions(0)),
            Field("mechanism", "int8", Versions(0)),
        ))), Versions(0)),
        Field("upsertions", ArrayOf(Struct("ScramCredentialUpsertion", (
            Field("name", "string", Versions(0)),
            Field("mechanism", "int8", Versions(0)),
            Field("iterations", "int32", Versions(0)),
            Field("salt", "bytes", Versions(0)),
            Field("salted_password", "bytes", Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterUserScramCredentialsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("results", ArrayOf(Struct("AlterUserScramCredentialsResult", (
            Field("user", "string", Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=51,
    name="AlterUserScramCredentials",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
