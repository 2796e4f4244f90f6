# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the ApiVersions API (key 18): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="ApiVersionsRequest",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("client_software_name", "string", Versions(3)),
        Field("client_software_version", "string", Versions(3)),
        Field("cluster_id", "string", Versions(5), nullable=Versions(5), default=None),
        Field("node_id", "int32", Versions(5), default=-1),
    ),
)

RESPONSE = MessageSchema(
    name="ApiVersionsResponse",
    valid=Versions(0, 5),
    flexible=Versions(3),
    fields=(
        Field("error_code", "int16", Versions(0)),
        Field("api_keys", ArrayOf(Struct("ApiVersion", (
            Field("api_key", "int16", Versions(0)),
            Field("min_version", "int16", Versions(0)),
            Field("max_version", "int16", Versions(0)),
        ))), Versions(0)),
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("supported_features", ArrayOf(Struct("SupportedFeatureKey", (
            Field("name", "string", Versions(3)),
            Field("min_version", "int16", Versions(3)),
            Field("max_version", "int16", Versions(3)),
        ))), Versions(3), tag=0, tagged=Versions(3)),
        Field("finalized_features_epoch", "int64", Versions(3), tag=1, tagged=Versions(3), default=-1),
        Field("finalized_features", ArrayOf(Struct("FinalizedFeatureKey", (
            Field("name", "string", Versions(3)),
            Field("max_version_level", "int16", Versions(3)),
            Field("min_version_level", "int16", Versions(3)),
        ))), Versions(3), tag=2, tagged=Versions(3)),
        Field("zk_migration_ready", "bool", Versions(3), tag=3, tagged=Versions(3)),
    ),
)

API = ApiSchema(
    api_key=18,
    name="ApiVersions",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=False,
)
