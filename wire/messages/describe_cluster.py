# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DescribeCluster API (key 60): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DescribeClusterRequest",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("include_cluster_authorized_operations", "bool", Versions(0)),
        Field("endpoint_type", "int8", Versions(1), default=1),
        Field("include_fenced_brokers", "bool", Versions(2)),
    ),
)

RESPONSE = MessageSchema(
    name="DescribeClusterResponse",
    valid=Versions(0, 2),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("endpoint_type", "int8", Versions(1), default=1),
        Field("cluster_id", "string", Versions(0)),
        Field("controller_id", "int32", Versions(0), default=-1),
        Field("brokers", ArrayOf(Struct("DescribeClusterBroker", (
            Field("broker_id", "int32", Versions(0)),
            Field("host", "string", Versions(0)),
            Field("port", "int32", Versions(0)),
            Field("rack", "string", Versions(0), nullable=Versions(0), default=None),
            Field("is_fenced", "bool", Versions(2)),
        ))), Versions(0)),
        Field("cluster_authorized_operations", "int32", Versions(0), default=-2147483648),
    ),
)

API = ApiSchema(
    api_key=60,
    name="DescribeCluster",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
