# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AddPartitionsToTxn API (key 24): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AddPartitionsToTxnRequest",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("transactions", ArrayOf(Struct("AddPartitionsToTxnTransaction", (
            Field("transactional_id", "string", Versions(4)),
            Field("producer_id", "int64", Versions(4)),
            Field("producer_epoch", "int16", Versions(4)),
            Field("verify_only", "bool", Versions(4)),
            Field("topics", ArrayOf(Struct("AddPartitionsToTxnTopic", (
                Field("name", "string", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(4)),
        ))), Versions(4)),
        Field("v3_and_below_transactional_id", "string", Versions(0, 3)),
        Field("v3_and_below_producer_id", "int64", Versions(0, 3)),
        Field("v3_and_below_producer_epoch", "int16", Versions(0, 3)),
        Field("v3_and_below_topics", ArrayOf(Struct("AddPartitionsToTxnTopic", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0, 3)),
    ),
)

RESPONSE = MessageSchema(
    name="AddPartitionsToTxnResponse",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(4)),
        Field("results_by_transaction", ArrayOf(Struct("AddPartitionsToTxnResult", (
            Field("transactional_id", "string", Versions(4)),
            Field("topic_results", ArrayOf(Struct("AddPartitionsToTxnTopicResult", (
                Field("name", "string", Versions(0)),
                Field("results_by_partition", ArrayOf(Struct("AddPartitionsToTxnPartitionResult", (
                    Field("partition_index", "int32", Versions(0)),
                    Field("partition_error_code", "int16", Versions(0)),
                ))), Versions(0)),
            ))), Versions(4)),
        ))), Versions(4)),
        Field("results_by_topic_v3_and_below", ArrayOf(Struct("AddPartitionsToTxnTopicResult", (
            Field("name", "string", Versions(0)),
            Field("results_by_partition", ArrayOf(Struct("AddPartitionsToTxnPartitionResult", (
                Field("partition_index", "int32", Versions(0)),
                Field("partition_error_code", "int16", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0, 3)),
    ),
)

API = ApiSchema(
    api_key=24,
    name="AddPartitionsToTxn",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
