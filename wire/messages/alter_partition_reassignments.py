# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterPartitionReassignments API (key 45): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterPartitionReassignmentsRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("timeout_ms", "int32", Versions(0), default=60000),
        Field("allow_replication_factor_change", "bool", Versions(1), default=True),
        Field("topics", ArrayOf(Struct("ReassignableTopic", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("ReassignablePartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("replicas", ArrayOf("int32"), Versions(0), nullable=Versions(0), default=None),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterPartitionReassignmentsResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("allow_replication_factor_change", "bool", Versions(1), default=True),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
        Field("responses", ArrayOf(Struct("ReassignableTopicResponse", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("ReassignablePartitionResponse", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=45,
    name="AlterPartitionReassignments",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
