# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeClientQuotas API (key 48): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeClientQuotasRequest",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("components", ArrayOf(Struct("ComponentData", (
            Field("entity_type", "string", Versions(0)),
            Field("match_type", "int8", Versions(0)),
            Field("match", "string", Versions(0), nullable=Versions(0)),
        ))), Versions(0)),
        Field("strict", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeClientQuotasResponse",
    valid=Versions(0, 1),
    flexible=Versions(1),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
        Field("entries", ArrayOf(Struct("EntryData", (
            Field("entity", ArrayOf(Struct("EntityData", (
                Field("entity_type", "string", Versions(0)),
                Field("entity_name", "string", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
            Field("values", ArrayOf(Struct("ValueData", (
                Field("key", "string", Versions(0)),
                Field("value", "float64", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0), nullable=Versions(0)),
    ),
)

API = ApiSchema(
    api_key=48,
    name="DescribeClientQuotas",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
