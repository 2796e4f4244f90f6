# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the EndTxn API (key 26): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="EndTxnRequest",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("transactional_id", "string", Versions(0)),
        Field("producer_id", "int64", Versions(0)),
        Field("producer_epoch", "int16", Versions(0)),
        Field("committed", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="EndTxnResponse",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("producer_id", "int64", Versions(5), default=-1),
        Field("producer_epoch", "int16", Versions(5), default=-1),
    ),
)

API = ApiSchema(
    api_key=26,
    name="EndTxn",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
