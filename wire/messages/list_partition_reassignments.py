# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ListPartitionReassignments API (key 46): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ListPartitionReassignmentsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("timeout_ms", "int32", Versions(0), default=60000),
        Field("topics", ArrayOf(Struct("ListPartitionReassignmentsTopics", (
            Field("name", "string", Versions(0)),
            Field("partition_indexes", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="ListPartitionReassignmentsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
        Field("topics", ArrayOf(Struct("OngoingTopicReassignment", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("OngoingPartitionReassignment", (
                Field("partition_index", "int32", Versions(0)),
                Field("replicas", ArrayOf("int32"), Versions(0)),
                Field("adding_replicas", ArrayOf("int32"), Versions(0)),
                Field("removing_replicas", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=46,
    name="ListPartitionReassignments",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
