# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the BrokerHeartbeat API (key 63): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="BrokerHeartbeatRequest",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("broker_id", "int32", Versions(0)),
        Field("broker_epoch", "int64", Versions(0), default=-1),
        Field("current_metadata_offset", "int64", Versions(0)),
        Field("want_fence", "bool", Versions(0)),
        Field("want_shut_down", "bool", Versions(0)),
        Field("offline_log_dirs", ArrayOf("uuid"), Versions(1), tag=0, tagged=Versions(1)),
        Field("cordoned_log_dirs", ArrayOf("uuid"), Versions(2), nullable=Versions(2), tag=1, tagged=Versions(2), default=None),
    ),
)

RESPONSE = MessageSchema(
    name="BrokerHeartbeatResponse",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("is_caught_up", "bool", Versions(0)),
        Field("is_fenced", "bool", Versions(0), default=True),
        Field("should_shut_down", "bool", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=63,
    name="BrokerHeartbeat",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
