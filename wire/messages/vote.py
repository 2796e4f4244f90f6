# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the Vote API (key 52): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="VoteRequest",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("cluster_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("voter_id", "int32", Versions(1), default=-1),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("replica_epoch", "int32", Versions(0)),
                Field("replica_id", "int32", Versions(0)),
                Field("replica_directory_id", "uuid", Versions(1)),
                Field("voter_directory_id", "uuid", Versions(1)),
                Field("last_offset_epoch", "int32", Versions(0)),
                Field("last_offset", "int64", Versions(0)),
                Field("pre_vote", "bool", Versions(2)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="VoteResponse",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
                Field("vote_granted", "bool", Versions(0)),
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
    api_key=52,
    name="Vote",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
