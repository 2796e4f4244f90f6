# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeUserScramCredentials API (key 50): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeUserScramCredentialsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("users", ArrayOf(Struct("UserName", (
            Field("name", "string", Versions(0)),
        ))), Versions(0), nullable=Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeUserScramCredentialsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
        Field("results", ArrayOf(Struct("DescribeUserScramCredentialsResult", (
            Field("user", "string", Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
            Field("credential_infos", ArrayOf(Struct("CredentialInfo", (
                Field("mechanism", "int8", Versions(0)),
                Field("iterations", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=50,
    name="DescribeUserScramCredentials",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
