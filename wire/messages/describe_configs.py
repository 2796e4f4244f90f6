# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeConfigs API (key 32): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeConfigsRequest",
    valid=Versions(1, 4),
    flexible=Versions(4),
    fields=(
        Field("resources", ArrayOf(Struct("DescribeConfigsResource", (
            Field("resource_type", "int8", Versions(0)),
            Field("resource_name", "string", Versions(0)),
            Field("configuration_keys", ArrayOf("string"), Versions(0), nullable=Versions(0)),
        ))), Versions(0)),
        Field("include_synonyms", "bool", Versions(1)),
        Field("include_documentation", "bool", Versions(3)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeConfigsResponse",
    valid=Versions(1, 4),
    flexible=Versions(4),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("results", ArrayOf(Struct("DescribeConfigsResult", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0)),
            Field("resource_type", "int8", Versions(0)),
            Field("resource_name", "string", Versions(0)),
            Field("configs", ArrayOf(Struct("DescribeConfigsResourceResult", (
                Field("name", "string", Versions(0)),
                Field("value", "string", Versions(0), nullable=Versions(0)),
                Field("read_only", "bool", Versions(0)),
                Field("config_source", "int8", Versions(1), default=-1),
                Field("is_sensitive", "bool", Versions(0)),
                Field("synonyms", ArrayOf(Struct("DescribeConfigsSynonym", (
                    Field("name", "string", Versions(1)),
                    Field("value", "string", Versions(1), nullable=Versions(0)),
                    Field("source", "int8", Versions(1)),
                ))), Versions(1)),
                Field("config_type", "int8", Versions(3)),
                Field("documentation", "string", Versions(3), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=32,
    name="DescribeConfigs",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
