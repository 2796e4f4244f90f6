# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the UpdateRaftVoter API (key 82): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="UpdateRaftVoterRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("cluster_id", "string", Versions(0), nullable=Versions(0)),
        Field("current_leader_epoch", "int32", Versions(0)),
        Field("voter_id", "int32", Versions(0)),
        Field("voter_directory_id", "uuid", Versions(0)),
        Field("listeners", ArrayOf(Struct("Listener", (
            Field("name", "string", Versions(0)),
            Field("host", "string", Versions(0)),
            Field("port", "uint16", Versions(0)),
        ))), Versions(0)),
        Field("k_raft_version_feature", Struct("KRaftVersionFeature", (
            Field("min_supported_version", "int16", Versions(0)),
            Field("max_supported_version", "int16", Versions(0)),
        )), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="UpdateRaftVoterResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("current_leader", Struct("CurrentLeader", (
            Field("leader_id", "int32", Versions(0), default=-1),
            Field("leader_epoch", "int32", Versions(0), default=-1),
            Field("host", "string", Versions(0)),
            Field("port", "int32", Versions(0)),
        )), Versions(0), tag=0, tagged=Versions(0)),
    ),
)

API = ApiSchema(
    api_key=82,
    name="UpdateRaftVoter",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
