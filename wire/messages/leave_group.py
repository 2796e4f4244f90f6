# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the LeaveGroup API (key 13): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="LeaveGroupRequest",
    valid=Versions(0, 5),
    flexible=Versions(4),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("member_id", "string", Versions(0, 2)),
        Field("members", ArrayOf(Struct("MemberIdentity", (
            Field("member_id", "string", Versions(3)),
            Field("group_instance_id", "string", Versions(3), nullable=Versions(3), default=None),
            Field("reason", "string", Versions(5), nullable=Versions(5), default=None),
        ))), Versions(3)),
    ),
)

RESPONSE = MessageSchema(
    name="LeaveGroupResponse",
    valid=Versions(0, 5),
    flexible=Versions(4),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("error_code", "int16", Versions(0)),
        Field("members", ArrayOf(Struct("MemberResponse", (
            Field("member_id", "string", Versions(3)),
            Field("group_instance_id", "string", Versions(3), nullable=Versions(3)),
            Field("error_code", "int16", Versions(3)),
        ))), Versions(3)),
    ),
)

API = ApiSchema(
    api_key=13,
    name="LeaveGroup",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
