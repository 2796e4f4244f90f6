# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the JoinGroup API (key 11): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="JoinGroupRequest",
    valid=Versions(0, 9),
    flexible=Versions(6),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("session_timeout_ms", "int32", Versions(0)),
        Field("rebalance_timeout_ms", "int32", Versions(1), default=-1),
        Field("member_id", "string", Versions(0)),
        Field("group_instance_id", "string", Versions(5), nullable=Versions(5), default=None),
        Field("protocol_type", "string", Versions(0)),
        Field("protocols", ArrayOf(Struct("JoinGroupRequestProtocol", (
            Field("name", "string", Versions(0)),
            Field("metadata", "bytes", Versions(0)),
        ))), Versions(0)),
        Field("reason", "string", Versions(8), nullable=Versions(8), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="JoinGroupResponse",
    valid=Versions(0, 9),
    flexible=Versions(6),
    fields=(
        Field("throttle_time_ms", "int32", Versions(2)),
        Field("error_code", "int16", Versions(0)),
        Field("generation_id", "int32", Versions(0), default=-1),
        Field("protocol_type", "string", Versions(7), nullable=Versions(7), default=None),
        Field("protocol_name", "string", Versions(0), nullable=Versions(7)),
        Field("leader", "string", Versions(0)),
        Field("skip_assignment", "bool", Versions(9)),
        Field("member_id", "string", Versions(0)),
        Field("members", ArrayOf(Struct("JoinGroupResponseMember", (
            Field("member_id", "string", Versions(0)),
            Field("group_instance_id", "string", Versions(5), nullable=Versions(5), default=None),
            Field("metadata", "bytes", Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=11,
    name="JoinGroup",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
