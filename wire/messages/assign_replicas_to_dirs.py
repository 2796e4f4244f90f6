# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AssignReplicasToDirs API (key 73): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AssignReplicasToDirsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("broker_id", "int32", Versions(0)),
        Field("broker_epoch", "int64", Versions(0), default=-1),
        Field("directories", ArrayOf(Struct("DirectoryData", (
            Field("id", "uuid", Versions(0)),
            Field("topics", ArrayOf(Struct("TopicData", (
                Field("topic_id", "uuid", Versions(0)),
                Field("partitions", ArrayOf(Struct("PartitionData", (
                    Field("partition_index", "int32", Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AssignReplicasToDirsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("directories", ArrayOf(Struct("DirectoryData", (
            Field("id", "uuid", Versions(0)),
            Field("topics", ArrayOf(Struct("TopicData", (
                Field("topic_id", "uuid", Versions(0)),
                Field("partitions", ArrayOf(Struct("PartitionData", (
                    Field("partition_index", "int32", Versions(0)),
                    Field("error_code", "int16", Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=73,
    name="AssignReplicasToDirs",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
