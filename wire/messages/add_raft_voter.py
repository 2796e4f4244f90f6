# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AddRaftVoter API (key 80): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AddRaftVoterRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("cluster_id", "string", Versions(0), nullable=Versions(0)),
        Field("timeout_ms", "int32", Versions(0)),
        Field("voter_id", "int32", Versions(0)),
        Field("voter_directory_id", "uuid", Versions(0)),
        Field("listeners", ArrayOf(Struct("Listener", (
            Field("name", "string", Versions(0)),
            Field("host", "string", Versions(0)),
            Field("port", "uint16", Versions(0)),
        ))), Versions(0)),
        Field("ack_when_committed", "bool", Versions(1), default=True),
    ),
)

RESPONSE = MessageSchema(
    name="AddRaftVoterResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
    ),
)

API = ApiSchema(
    api_key=80,
    name="AddRaftVoter",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller", "broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
