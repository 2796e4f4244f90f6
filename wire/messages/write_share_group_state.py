# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the WriteShareGroupState API (key 85): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="WriteShareGroupStateRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("topics", ArrayOf(Struct("WriteStateData", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition", "int32", Versions(0)),
                Field("state_epoch", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
                Field("start_offset", "int64", Versions(0)),
                Field("delivery_complete_count", "int32", Versions(1), default=-1),
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

RESPONSE = MessageSchema(
    name="WriteShareGroupStateResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("results", ArrayOf(Struct("WriteStateResult", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionResult", (
                Field("partition", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=85,
    name="WriteShareGroupState",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
