# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ReadShareGroupState API (key 84): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ReadShareGroupStateRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("topics", ArrayOf(Struct("ReadStateData", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ReadShareGroupStateResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("results", ArrayOf(Struct("ReadStateResult", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionResult", (
                Field("partition", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
                Field("state_epoch", "int32", Versions(0)),
                Field("start_offset", "int64", Versions(0)),
                Field("state_batches", ArrayOf(Struct("StateBatch", (
                    Field("first_offset", "int64", Versions(0)),
                    Field("last_offset", "int64", Versions(0)),
                    Field("delivery_state", "int8", Versions(0)),
                    Field("delivery_count", "int16", Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=84,
    name="ReadShareGroupState",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
