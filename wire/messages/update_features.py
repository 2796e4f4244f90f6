# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the UpdateFeatures API (key 57): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="UpdateFeaturesRequest",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("timeout_ms", "int32", Versions(0), default=60000),
        Field("feature_updates", ArrayOf(Struct("FeatureUpdateKey", (
            Field("feature", "string", Versions(0)),
            Field("max_version_level", "int16", Versions(0)),
            Field("allow_downgrade", "bool", Versions(0, 0)),
            Field("upgrade_type", "int8", Versions(1), default=1),
        ))), Versions(0)),
        Field("validate_only", "bool", Versions(1)),
    ),
)

RESPONSE = MessageSchema(
    name="UpdateFeaturesResponse",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0)),
        Field("results", ArrayOf(Struct("UpdatableFeatureResult", (
            Field("feature", "string", Versions(0)),
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
        ))), Versions(0, 1)),
    ),
)

API = ApiSchema(
    api_key=57,
    name="UpdateFeatures",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
