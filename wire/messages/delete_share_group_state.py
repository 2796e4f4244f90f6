# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DeleteShareGroupState API (key 86): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DeleteShareGroupStateRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("topics", ArrayOf(Struct("DeleteStateData", (
            Field("topic_id", "uuid", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DeleteShareGroupStateResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("results", ArrayOf(Struct("DeleteStateResult", (
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
    api_key=86,
    name="DeleteShareGroupState",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
