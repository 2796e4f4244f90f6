# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ElectLeaders API (key 43): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ElectLeadersRequest",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("election_type", "int8", Versions(1)),
        Field("topic_partitions", ArrayOf(Struct("TopicPartitions", (
            Field("topic", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0)),
        Field("timeout_ms", "int32", Versions(0), default=60000),
    ),
)

RESPONSE = MessageSchema(
    name="ElectLeadersResponse",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(1)),
        Field("replica_election_results", ArrayOf(Struct("ReplicaElectionResult", (
            Field("topic", "string", Versions(0)),
            Field("partition_result", ArrayOf(Struct("PartitionResult", (
                Field("partition_id", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=43,
    name="ElectLeaders",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
