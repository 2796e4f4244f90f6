# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the SyncGroup API (key 14): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="SyncGroupRequest",
    valid=Versions(0, 5),
    flexible=Versions(4),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("generation_id", "int32", Versions(0)),
        Field("member_id", "string", Versions(0)),
        Field("group_instance_id", "string", Versions(3), nullable=Versions(3), default=None),
        Field("protocol_type", "string", Versions(5), nullable=Versions(5), default=None),
        Field("protocol_name", "string", Versions(5), nullable=Versions(5), default=None),
        Field("assignments", ArrayOf(Struct("SyncGroupRequestAssignment", (
            Field("member_id", "string", Versions(0)),
            Field("assignment", "bytes", Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="SyncGroupResponse",
    valid=Versions(0, 5),
    flexible=Versions(4),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("error_code", "int16", Versions(0)),
        Field("protocol_type", "string", Versions(5), nullable=Versions(5), default=None),
        Field("protocol_name", "string", Versions(5), nullable=Versions(5), default=None),
        Field("assignment", "bytes", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=14,
    name="SyncGroup",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
