# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the InitProducerId API (key 22): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="InitProducerIdRequest",
    valid=Versions(0, 6),
    flexible=Versions(2),
    fields=(
        Field("transactional_id", "string", Versions(0), nullable=Versions(0)),
        Field("transaction_timeout_ms", "int32", Versions(0)),
        Field("producer_id", "int64", Versions(3), default=-1),
        Field("producer_epoch", "int16", Versions(3), default=-1),
        Field("enable2_pc", "bool", Versions(6)),
        Field("keep_prepared_txn", "bool", Versions(6)),
    ),
)

RESPONSE = MessageSchema(
    name="InitProducerIdResponse",
    valid=Versions(0, 6),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("producer_id", "int64", Versions(0), default=-1),
        Field("producer_epoch", "int16", Versions(0)),
        Field("ongoing_txn_producer_id", "int64", Versions(6), default=-1),
        Field("ongoing_txn_producer_epoch", "int16", Versions(6), default=-1),
    ),
)

API = ApiSchema(
    api_key=22,
    name="InitProducerId",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=True,
    flexible_response_header=True,
)
