# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the BrokerRegistration API (key 62): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="BrokerRegistrationRequest",
    valid=Versions(0, 4),
    flexible=Versions(0),
    fields=(
        Field("broker_id", "int32", Versions(0)),
        Field("cluster_id", "string", Versions(0)),
        Field("incarnation_id", "uuid", Versions(0)),
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
        Field("rack", "string", Versions(0), nullable=Versions(0)),
        Field("is_migrating_zk_broker", "bool", Versions(1)),
        Field("log_dirs", ArrayOf("uuid"), Versions(2)),
        Field("previous_broker_epoch", "int64", Versions(3), default=-1),
    ),
)

RESPONSE = MessageSchema(
    name="BrokerRegistrationResponse",
    valid=Versions(0, 4),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("broker_epoch", "int64", Versions(0), default=-1),
    ),
)

API = ApiSchema(
    api_key=62,
    name="BrokerRegistration",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
