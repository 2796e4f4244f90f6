# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeProducers API (key 61): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeProducersRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("topics", ArrayOf(Struct("TopicRequest", (
            Field("name", "string", Versions(0)),
            Field("partition_indexes", ArrayOf("int32"), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeProducersResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("topics", ArrayOf(Struct("TopicResponse", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionResponse", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
                Field("active_producers", ArrayOf(Struct("ProducerState", (
                    Field("producer_id", "int64", Versions(0)),
                    Field("producer_epoch", "int32", Versions(0)),
                    Field("last_sequence", "int32", Versions(0), default=-1),
                    Field("last_timestamp", "int64", Versions(0), default=-1),
                    Field("coordinator_epoch", "int32", Versions(0)),
                    Field("current_txn_start_offset", "int64", Versions(0), default=-1),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=61,
    name="DescribeProducers",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
