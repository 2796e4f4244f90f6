# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the Produce API (key 0): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ProduceRequest",
    valid=Versions(3, 13),
    flexible=Versions(9),
    fields=(
        Field("transactional_id", "string", Versions(3), nullable=Versions(3), default=None),
        Field("acks", "int16", Versions(0)),
        Field("timeout_ms", "int32", Versions(0)),
        Field("topic_data", ArrayOf(Struct("TopicProduceData", (
            Field("name", "string", Versions(0, 12)),
            Field("topic_id", "uuid", Versions(13)),
            Field("partition_data", ArrayOf(Struct("PartitionProduceData", (
                Field("index", "int32", Versions(0)),
                Field("records", "records", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ProduceResponse",
    valid=Versions(3, 13),
    flexible=Versions(9),
    fields=(
        Field("responses", ArrayOf(Struct("TopicProduceResponse", (
            Field("name", "string", Versions(0, 12)),
            Field("topic_id", "uuid", Versions(13)),
            Field("partition_responses", ArrayOf(Struct("PartitionProduceResponse", (
                Field("index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("base_offset", "int64", Versions(0)),
                Field("log_append_time_ms", "int64", Versions(2), default=-1),
                Field("log_start_offset", "int64", Versions(5), default=-1),
                Field("record_errors", ArrayOf(Struct("BatchIndexAndErrorMessage", (
                    Field("batch_index", "int32", Versions(8)),
                    Field("batch_index_error_message", "string", Versions(8), nullable=Versions(8), default=None),
                ))), Versions(8)),
                Field("error_message", "string", Versions(8), nullable=Versions(8), default=None),
                Field("current_leader", Struct("LeaderIdAndEpoch", (
                    Field("leader_id", "int32", Versions(10), default=-1),
                    Field("leader_epoch", "int32", Versions(10), default=-1),
                )), Versions(10), tag=0, tagged=Versions(10)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("node_endpoints", ArrayOf(Struct("NodeEndpoint", (
            Field("node_id", "int32", Versions(10)),
            Field("host", "string", Versions(10)),
            Field("port", "int32", Versions(10)),
            Field("rack", "string", Versions(10), nullable=Versions(10), default=None),
        ))), Versions(10), tag=0, tagged=Versions(10)),
    ),
)

API = ApiSchema(
    api_key=0,
    name="Produce",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
