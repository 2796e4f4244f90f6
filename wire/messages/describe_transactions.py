# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeTransactions API (key 65): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeTransactionsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("transactional_ids", ArrayOf("string"), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeTransactionsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("transaction_states", ArrayOf(Struct("TransactionState", (
            Field("error_code", "int16", Versions(0)),
            Field("transactional_id", "string", Versions(0)),
            Field("transaction_state", "string", Versions(0)),
            Field("transaction_timeout_ms", "int32", Versions(0)),
            Field("transaction_start_time_ms", "int64", Versions(0)),
            Field("producer_id", "int64", Versions(0)),
            Field("producer_epoch", "int16", Versions(0)),
            Field("topics", ArrayOf(Struct("TopicData", (
                Field("topic", "string", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=65,
    name="DescribeTransactions",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
