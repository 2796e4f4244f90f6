# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the FetchSnapshot API (key 59): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="FetchSnapshotRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("cluster_id", "string", Versions(0), nullable=Versions(0), tag=0, tagged=Versions(0), default=None),
        Field("replica_id", "int32", Versions(0), default=-1),
        Field("max_bytes", "int32", Versions(0), default=2147483647),
        Field("topics", ArrayOf(Struct("TopicSnapshot", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionSnapshot", (
                Field("partition", "int32", Versions(0)),
                Field("current_leader_epoch", "int32", Versions(0)),
                Field("snapshot_id", Struct("SnapshotId", (
                    Field("end_offset", "int64", Versions(0)),
                    Field("epoch", "int32", Versions(0)),
                )), Versions(0)),
                Field("position", "int64", Versions(0)),
                Field("replica_directory_id", "uuid", Versions(1), tag=0, tagged=Versions(1)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="FetchSnapshotResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("topics", ArrayOf(Struct("TopicSnapshot", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionSnapshot", (
                Field("index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("snapshot_id", Struct("SnapshotId", (
                    Field("end_offset", "int64", Versions(0)),
                    Field("epoch", "int32", Versions(0)),
                )), Versions(0)),
                Field("current_leader", Struct("LeaderIdAndEpoch", (
                    Field("leader_id", "int32", Versions(0)),
                    Field("leader_epoch", "int32", Versions(0)),
                )), Versions(0), tag=0, tagged=Versions(0)),
                Field("size", "int64", Versions(0)),
                Field("position", "int64", Versions(0)),
                Field("unaligned_records", "records", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("node_endpoints", ArrayOf(Struct("NodeEndpoint", (
            Field("node_id", "int32", Versions(1)),
            Field("host", "string", Versions(1)),
            Field("port", "uint16", Versions(1)),
        ))), Versions(1), tag=0, tagged=Versions(1)),
    ),
)

API = ApiSchema(
    api_key=59,
    name="FetchSnapshot",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
