# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ListTransactions API (key 66): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ListTransactionsRequest",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("state_filters", ArrayOf("string"), Versions(0)),
        Field("producer_id_filters", ArrayOf("int64"), Versions(0)),
        Field("duration_filter", "int64", Versions(1), default=-1),
        Field("transactional_id_pattern", "string", Versions(2), nullable=Versions(2), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="ListTransactionsResponse",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("unknown_state_filters", ArrayOf("string"), Versions(0)),
        Field("transaction_states", ArrayOf(Struct("TransactionState", (
            Field("transactional_id", "string", Versions(0)),
            Field("producer_id", "int64", Versions(0)),
            Field("transaction_state", "string", Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=66,
    name="ListTransactions",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
