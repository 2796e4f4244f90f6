# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterClientQuotas API (key 49): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterClientQuotasRequest",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("entries", ArrayOf(Struct("EntryData", (
            Field("entity", ArrayOf(Struct("EntityData", (
                Field("entity_type", "string", Versions(0)),
                Field("entity_name", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
            Field("ops", ArrayOf(Struct("OpData", (
                Field("key", "string", Versions(0)),
                Field("value", "float64", Versions(0)),
                Field("remove", "bool", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("validate_only", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterClientQuotasResponse",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("entries", ArrayOf(Struct("EntryData", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
            Field("entity", ArrayOf(Struct("EntityData", (
                Field("entity_type", "string", Versions(0)),
                Field("entity_name", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=49,
    name="AlterClientQuotas",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
