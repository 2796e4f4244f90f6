# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DeleteAcls API (key 31): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DeleteAclsRequest",
    valid=Versions(1, 3),
    flexible=Versions(2),
    fields=(
        Field("filters", ArrayOf(Struct("DeleteAclsFilter", (
            Field("resource_type_filter", "int8", Versions(0)),
            Field("resource_name_filter", "string", Versions(0), nullable=Versions(0)),
            Field("pattern_type_filter", "int8", Versions(1), default=3),
            Field("principal_filter", "string", Versions(0), nullable=Versions(0)),
            Field("host_filter", "string", Versions(0), nullable=Versions(0)),
            Field("operation", "int8", Versions(0)),
            Field("permission_type", "int8", Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DeleteAclsResponse",
    valid=Versions(1, 3),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("filter_results", ArrayOf(Struct("DeleteAclsFilterResult", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
            Field("matching_acls", ArrayOf(Struct("DeleteAclsMatchingAcl", (
                Field("error_code", "int16", Versions(0)),
                Field("error_message", "string", Versions(0), nullable=Versions(0)),
                Field("resource_type", "int8", Versions(0)),
                Field("resource_name", "string", Versions(0)),
                Field("pattern_type", "int8", Versions(1), default=3),
                Field("principal", "string", Versions(0)),
                Field("host", "string", Versions(0)),
                Field("operation", "int8", Versions(0)),
                Field("permission_type", "int8", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=31,
    name="DeleteAcls",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
