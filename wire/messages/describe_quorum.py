# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeQuorum API (key 55): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeQuorumRequest",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeQuorumResponse",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(2), nullable=Versions(2)),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(2), nullable=Versions(2)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
                Field("high_watermark", "int64", Versions(0)),
                Field("current_voters", ArrayOf(Struct("ReplicaState", (
                    Field("replica_id", "int32", Versions(0)),
                    Field("replica_directory_id", "uuid", Versions(2)),
                    Field("log_end_offset", "int64", Versions(0)),
                    Field("last_fetch_timestamp", "int64", Versions(1), default=-1),
                    Field("last_caught_up_timestamp", "int64", Versions(1), default=-1),
                ))), Versions(0)),
                Field("observers", ArrayOf(Struct("ReplicaState", (
                    Field("replica_id", "int32", Versions(0)),
                    Field("replica_directory_id", "uuid", Versions(2)),
                    Field("log_end_offset", "int64", Versions(0)),
                    Field("last_fetch_timestamp", "int64", Versions(1), default=-1),
                    Field("last_caught_up_timestamp", "int64", Versions(1), default=-1),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("nodes", ArrayOf(Struct("Node", (
            Field("node_id", "int32", Versions(2)),
            Field("listeners", ArrayOf(Struct("Listener", (
                Field("name", "string", Versions(2)),
                Field("host", "string", Versions(2)),
                Field("port", "uint16", Versions(2)),
            ))), Versions(2)),
        ))), Versions(2)),
    ),
)

API = ApiSchema(
    api_key=55,
    name="DescribeQuorum",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
