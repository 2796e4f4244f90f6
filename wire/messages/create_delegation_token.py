# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the CreateDelegationToken API (key 38): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="CreateDelegationTokenRequest",
    valid=Versions(1, 3),
    flexible=Versions(2),
    fields=(
        Field("owner_principal_type", "string", Versions(3), nullable=Versions(3)),
        Field("owner_principal_name", "string", Versions(3), nullable=Versions(3)),
        Field("renewers", ArrayOf(Struct("CreatableRenewers", (
            Field("principal_type", "string", Versions(0)),
            Field("principal_name", "string", Versions(0)),
        ))), Versions(0)),
        Field("max_lifetime_ms", "int64", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="CreateDelegationTokenResponse",
    valid=Versions(1, 3),
    flexible=Versions(2),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("principal_type", "string", Versions(0)),
        Field("principal_name", "string", Versions(0)),
        Field("token_requester_principal_type", "string", Versions(3)),
        Field("token_requester_principal_name", "string", Versions(3)),
        Field("issue_timestamp_ms", "int64", Versions(0)),
        Field("expiry_timestamp_ms", "int64", Versions(0)),
        Field("max_timestamp_ms", "int64", Versions(0)),
        Field("token_id", "string", Versions(0)),
        Field("hmac", "bytes", Versions(0)),
        Field("throttle_time_ms", "int32", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=38,
    name="CreateDelegationToken",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
