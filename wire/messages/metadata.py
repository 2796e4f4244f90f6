# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the Metadata API (key 3): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="MetadataRequest",
    valid=Versions(0, 13),
    flexible=Versions(9),
    fields=(
        Field("topics", ArrayOf(Struct("MetadataRequestTopic", (
            Field("topic_id", "uuid", Versions(10)),
            Field("name", "string", Versions(0), nullable=Versions(10)),
        ))), Versions(0), nullable=Versions(1)),
        Field("allow_auto_topic_creation", "bool", Versions(4), default=True),
        Field("include_cluster_authorized_operations", "bool", Versions(8, 10)),
        Field("include_topic_authorized_operations", "bool", Versions(8)),
    ),
)

RESPONSE = MessageSchema(
    name="MetadataResponse",
    valid=Versions(0, 13),
    flexible=Versions(9),
    fields=(
        Field("throttle_time_ms", "int32", Versions(3)),
        Field("brokers", ArrayOf(Struct("MetadataResponseBroker", (
            Field("node_id", "int32", Versions(0)),
            Field("host", "string", Versions(0)),
            Field("port", "int32", Versions(0)),
            Field("rack", "string", Versions(1), nullable=Versions(1), default=None),
        ))), Versions(0)),
        Field("cluster_id", "string", Versions(2), nullable=Versions(2), default=None),
        Field("controller_id", "int32", Versions(1), default=-1),
        Field("topics", ArrayOf(Struct("MetadataResponseTopic", (
            Field("error_code", "int16", Versions(0)),
            Field("name", "string", Versions(0), nullable=Versions(12)),
            Field("topic_id", "uuid", Versions(10)),
            Field("is_internal", "bool", Versions(1)),
            Field("partitions", ArrayOf(Struct("MetadataResponsePartition", (
                Field("error_code", "int16", Versions(0)),
                Field("partition_index", "int32", Versions(0)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(7), default=-1),
                Field("replica_nodes", ArrayOf("int32"), Versions(0)),
                Field("isr_nodes", ArrayOf("int32"), Versions(0)),
                Field("offline_replicas", ArrayOf("int32"), Versions(5)),
            ))), Versions(0)),
            Field("topic_authorized_operations", "int32", Versions(8), default=-2147483648),
        ))), Versions(0)),
        Field("cluster_authorized_operations", "int32", Versions(8, 10), default=-2147483648),
        Field("error_code", "int16", Versions(13)),
    ),
)

API = ApiSchema(
    api_key=3,
    name="Metadata",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
