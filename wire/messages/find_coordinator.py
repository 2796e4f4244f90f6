# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the FindCoordinator API (key 10): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="FindCoordinatorRequest",
    valid=Versions(0, 6),
    flexible=Versions(3),
    fields=(
        Field("key", "string", Versions(0, 3)),
        Field("key_type", "int8", Versions(1)),
        Field("coordinator_keys", ArrayOf("string"), Versions(4)),
    ),
)

RESPONSE = MessageSchema(
    name="FindCoordinatorResponse",
    valid=Versions(0, 6),
    flexible=Versions(3),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("error_code", "int16", Versions(0, 3)),
        Field("error_message", "string", Versions(1, 3), nullable=Versions(1, 3)),
        Field("node_id", "int32", Versions(0, 3)),
        Field("host", "string", Versions(0, 3)),
        Field("port", "int32", Versions(0, 3)),
        Field("coordinators", ArrayOf(Struct("Coordinator", (
            Field("key", "string", Versions(4)),
            Field("node_id", "int32", Versions(4)),
            Field("host", "string", Versions(4)),
            Field("port", "int32", Versions(4)),
            Field("error_code", "int16", Versions(4)),
            Field("error_message", "string", Versions(4), nullable=Versions(4)),
        ))), Versions(4)),
    ),
)

API = ApiSchema(
    api_key=10,
    name="FindCoordinator",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
