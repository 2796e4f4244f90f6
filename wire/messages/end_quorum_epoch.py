# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the EndQuorumEpoch API (key 54): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="EndQuorumEpochRequest",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("cluster_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
                Field("preferred_successors", ArrayOf("int32"), Versions(0, 0)),
                Field("preferred_candidates", ArrayOf(Struct("ReplicaInfo", (
                    Field("candidate_id", "int32", Versions(1)),
                    Field("candidate_directory_id", "uuid", Versions(1)),
                ))), Versions(1)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("leader_endpoints", ArrayOf(Struct("LeaderEndpoint", (
            Field("name", "string", Versions(1)),
            Field("host", "string", Versions(1)),
            Field("port", "uint16", Versions(1)),
        ))), Versions(1)),
    ),
)

RESPONSE = MessageSchema(
    name="EndQuorumEpochResponse",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
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
    api_key=54,
    name="EndQuorumEpoch",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
