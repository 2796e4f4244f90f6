# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AddOffsetsToTxn API (key 25): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="AddOffsetsToTxnRequest",
    valid=Versions(0, 4),
    flexible=Versions(3),
    fields=(
        Field("transactional_id", "string", Versions(0)),
        Field("producer_id", "int64", Versions(0)),
        Field("producer_epoch", "int16", Versions(0)),
        Field("group_id", "string", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AddOffsetsToTxnResponse",
    valid=Versions(0, 4),
    flexible=Versions(3),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=25,
    name="AddOffsetsToTxn",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
