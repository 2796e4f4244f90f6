# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the RemoveRaftVoter API (key 81): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="RemoveRaftVoterRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("cluster_id", "string", Versions(0), nullable=Versions(0)),
        Field("voter_id", "int32", Versions(0)),
        Field("voter_directory_id", "uuid", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="RemoveRaftVoterResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
    ),
)

API = ApiSchema(
    api_key=81,
    name="RemoveRaftVoter",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller", "broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
