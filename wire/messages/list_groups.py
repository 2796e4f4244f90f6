# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ListGroups API (key 16): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ListGroupsRequest",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("states_filter", ArrayOf("string"), Versions(4)),
        Field("types_filter", ArrayOf("string"), Versions(5)),
    ),
)

RESPONSE = MessageSchema(
    name="ListGroupsResponse",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("error_code", "int16", Versions(0)),
        Field("groups", ArrayOf(Struct("ListedGroup", (
            Field("group_id", "string", Versions(0)),
            Field("protocol_type", "string", Versions(0)),
            Field("group_state", "string", Versions(4)),
            Field("group_type", "string", Versions(5)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=16,
    name="ListGroups",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
