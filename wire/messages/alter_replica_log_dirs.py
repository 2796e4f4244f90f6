# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterReplicaLogDirs API (key 34): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterReplicaLogDirsRequest",
    valid=Versions(1, 2),
    flexible=Versions(2),
    fields=(
        Field("dirs", ArrayOf(Struct("AlterReplicaLogDir", (
            Field("path", "string", Versions(0)),
            Field("topics", ArrayOf(Struct("AlterReplicaLogDirTopic", (
                Field("name", "string", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterReplicaLogDirsResponse",
    valid=Versions(1, 2),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("results", ArrayOf(Struct("AlterReplicaLogDirTopicResult", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("AlterReplicaLogDirPartitionResult", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=34,
    name="AlterReplicaLogDirs",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
