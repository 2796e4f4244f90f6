# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the StreamsGroupHeartbeat API (key 88): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="StreamsGroupHeartbeatRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("member_id", "string", Versions(0)),
        Field("member_epoch", "int32", Versions(0)),
        Field("endpoint_information_epoch", "int32", Versions(0)),
        Field("instance_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("rack_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("rebalance_timeout_ms", "int32", Versions(0), default=-1),
        Field("topology", Struct("Topology", (
            Field("epoch", "int32", Versions(0)),
            Field("subtopologies", ArrayOf(Struct("Subtopology", (
                Field("subtopology_id", "string", Versions(0)),
                Field("source_topics", ArrayOf("string"), Versions(0)),
                Field("source_topic_regex", ArrayOf("string"), Versions(0)),
                Field("state_changelog_topics", ArrayOf(Struct("TopicInfo", (
                    Field("name", "string", Versions(0)),
                    Field("partitions", "int32", Versions(0)),
                    Field("replication_factor", "int16", Versions(0)),
                    Field("topic_configs", ArrayOf(Struct("KeyValue", (
                        Field("key", "string", Versions(0)),
                        Field("value", "string", Versions(0)),
                    ))), Versions(0)),
                ))), Versions(0)),
                Field("repartition_sink_topics", ArrayOf("string"), Versions(0)),
                Field("repartition_source_topics", ArrayOf(Struct("TopicInfo", (
                    Field("name", "string", Versions(0)),
                    Field("partitions", "int32", Versions(0)),
                    Field("replication_factor", "int16", Versions(0)),
                    Field("topic_configs", ArrayOf(Struct("KeyValue", (
                        Field("key", "string", Versions(0)),
                        Field("value", "string", Versions(0)),
                    ))), Versions(0)),
                ))), Versions(0)),
                Field("copartition_groups", ArrayOf(Struct("CopartitionGroup", (
                    Field("source_topics", ArrayOf("int16"), Versions(0)),
                    Field("source_topic_regex", ArrayOf("int16"), Versions(0)),
                    Field("repartition_source_topics", ArrayOf("int16"), Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        )), Versions(0), nullable=Versions(0), default=None),
        Field("active_tasks", ArrayOf(Struct("TaskIds", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("standby_tasks", ArrayOf(Struct("TaskIds", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("warmup_tasks", ArrayOf(Struct("TaskIds", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("process_id", "string", Versions(0), nullable=Versions(0), default=None),
        Field("user_endpoint", Struct("Endpoint", (
            Field("host", "string", Versions(0)),
            Field("port", "uint16", Versions(0)),
        )), Versions(0), nullable=Versions(0), default=None),
        Field("client_tags", ArrayOf(Struct("KeyValue", (
            Field("key", "string", Versions(0)),
            Field("value", "string", Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("task_offsets", ArrayOf(Struct("TaskOffset", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partition", "int32", Versions(0)),
            Field("offset", "int64", Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("task_end_offsets", ArrayOf(Struct("TaskOffset", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partition", "int32", Versions(0)),
            Field("offset", "int64", Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("shutdown_application", "bool", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="StreamsGroupHeartbeatResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
        Field("member_id", "string", Versions(0)),
        Field("member_epoch", "int32", Versions(0)),
        Field("heartbeat_interval_ms", "int32", Versions(0)),
        Field("acceptable_recovery_lag_legacy", "int32", Versions(0, 0)),
        Field("task_offset_interval_ms", "int32", Versions(0)),
        Field("acceptable_recovery_lag", "int64", Versions(1), default=-1),
        Field("status", ArrayOf(Struct("Status", (
            Field("status_code", "int8", Versions(0)),
            Field("status_detail", "string", Versions(0)),
        ))), Versions(0), nullable=Versions(0)),
        Field("active_tasks", ArrayOf(Struct("TaskIds", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("standby_tasks", ArrayOf(Struct("TaskIds", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("warmup_tasks", ArrayOf(Struct("TaskIds", (
            Field("subtopology_id", "string", Versions(0)),
            Field("partitions", ArrayOf("int32"), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
        Field("topology_description_required", "bool", Versions(1)),
        Field("endpoint_information_epoch", "int32", Versions(0)),
        Field("partitions_by_user_endpoint", ArrayOf(Struct("EndpointToPartitions", (
            Field("user_endpoint", Struct("Endpoint", (
                Field("host", "string", Versions(0)),
                Field("port", "uint16", Versions(0)),
            )), Versions(0)),
            Field("active_partitions", ArrayOf(Struct("TopicPartition", (
                Field("topic", "string", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
            Field("standby_partitions", ArrayOf(Struct("TopicPartition", (
                Field("topic", "string", Versions(0)),
                Field("partitions", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0), nullable=Versions(0), default=None),
    ),
)

API = ApiSchema(
    api_key=88,
    name="StreamsGroupHeartbeat",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
