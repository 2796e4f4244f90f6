# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeGroups API (key 15): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeGroupsRequest",
    valid=Versions(0, 6),
    flexible=Versions(5),
    fields=(
        Field("groups", ArrayOf("string"), Versions(0)),
        Field("include_authorized_operations", "bool", Versions(3)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeGroupsResponse",
    valid=Versions(0, 6),
    flexible=Versions(5),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("groups", ArrayOf(Struct("DescribedGroup", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(6), nullable=Versions(6), default=None),
            Field("group_id", "string", Versions(0)),
            Field("group_state", "string", Versions(0)),
            Field("protocol_type", "string", Versions(0)),
            Field("protocol_data", "string", Versions(0)),
            Field("members", ArrayOf(Struct("DescribedGroupMember", (
                Field("member_id", "string", Versions(0)),
                Field("group_instance_id", "string", Versions(4), nullable=Versions(4), default=None),
                Field("client_id", "string", Versions(0)),
                Field("client_host", "string", Versions(0)),
                Field("member_metadata", "bytes", Versions(0)),
                Field("member_assignment", "bytes", Versions(0)),
            ))), Versions(0)),
            Field("authorized_operations", "int32", Versions(3), default=-2147483648),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=15,
    name="DescribeGroups",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
