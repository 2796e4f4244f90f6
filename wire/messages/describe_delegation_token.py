# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeDelegationToken API (key 41): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeDelegationTokenRequest",
    valid=Versions(1, 3),
    flexible=Versions(2),
    fields=(
        Field("owners", ArrayOf(Struct("DescribeDelegationTokenOwner", (
            Field("principal_type", "string", Versions(0)),
            Field("principal_name", "string", Versions(0)),
        ))), Versions(0), nullable=Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeDelegationTokenResponse",
    valid=Versions(1, 3),
    flexible=Versions(2),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("tokens", ArrayOf(Struct("DescribedDelegationToken", (
            Field("principal_type", "string", Versions(0)),
            Field("principal_name", "string", Versions(0)),
            Field("token_requester_principal_type", "string", Versions(3)),
            Field("token_requester_principal_name", "string", Versions(3)),
            Field("issue_timestamp", "int64", Versions(0)),
            Field("expiry_timestamp", "int64", Versions(0)),
            Field("max_timestamp", "int64", Versions(0)),
            Field("token_id", "string", Versions(0)),
            Field("hmac", "bytes", Versions(0)),
            Field("renewers", ArrayOf(Struct("DescribedDelegationTokenRenewer", (
                Field("principal_type", "string", Versions(0)),
                Field("principal_name", "string", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("throttle_time_ms", "int32", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=41,
    name="DescribeDelegationToken",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
