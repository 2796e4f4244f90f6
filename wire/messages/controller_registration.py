# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ControllerRegistration API (key 70): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ControllerRegistrationRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("controller_id", "int32", Versions(0)),
        Field("incarnation_id", "uuid", Versions(0)),
        Field("zk_migration_ready", "bool", Versions(0)),
        Field("listeners", ArrayOf(Struct("Listener", (
            Field("name", "string", Versions(0)),
            Field("host", "string", Versions(0)),
            Field("port", "uint16", Versions(0)),
            Field("security_protocol", "int16", Versions(0)),
        ))), Versions(0)),
        Field("features", ArrayOf(Struct("Feature", (
            Field("name", "string", Versions(0)),
            Field("min_supported_version", "int16", Versions(0)),
            Field("max_supported_version", "int16", Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="ControllerRegistrationResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
    ),
)

API = ApiSchema(
    api_key=70,
    name="ControllerRegistration",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
