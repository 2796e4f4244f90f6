# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DeleteGroups API (key 42): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DeleteGroupsRequest",
    valid=Versions(0, 3),
    flexible=Versions(2),
    fields=(
        Field("groups_names", ArrayOf("string"), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DeleteGroupsResponse",
    valid=Versions(0, 3),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("results", ArrayOf(Struct("DeletableGroupResult", (
            Field("group_id", "string", Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(3), nullable=Versions(3), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=42,
    name="DeleteGroups",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
