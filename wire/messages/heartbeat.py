# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the Heartbeat API (key 12): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="HeartbeatRequest",
    valid=Versions(0, 4),
    flexible=Versions(4),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("generation_id", "int32", Versions(0)),
        Field("member_id", "string", Versions(0)),
        Field("group_instance_id", "string", Versions(3), nullable=Versions(3), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="HeartbeatResponse",
    valid=Versions(0, 4),
    flexible=Versions(4),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("error_code", "int16", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=12,
    name="Heartbeat",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
