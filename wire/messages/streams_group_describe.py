# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the StreamsGroupDescribe API (key 89): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="StreamsGroupDescribeRequest",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("group_ids", ArrayOf("string"), Versions(0)),
        Field("include_authorized_operations", "bool", Versions(0)),
        Field("include_topology_description", "bool", Versions(1)),
    ),
)

RESPONSE = MessageSchema(
    name="StreamsGroupDescribeResponse",
    valid=Versions(0, 1),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("groups", ArrayOf(Struct("DescribedGroup", (
            Field("error_code", "int16", Versions(0)),
            Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
            Field("group_id", "string", Versions(0)),
            Field("group_state", "string", Versions(0)),
            Field("group_epoch", "int32", Versions(0)),
            Field("assignment_epoch", "int32", Versions(0)),
            Field("topology", Struct("Topology", (
                Field("epoch", "int32", Versions(0)),
                Field("subtopologies", ArrayOf(Struct("Subtopology", (
                    Field("subtopology_id", "string", Versions(0)),
                    Field("source_topics", ArrayOf("string"), Versions(0)),
                    Field("repartition_sink_topics", ArrayOf("string"), Versions(0)),
                    Field("state_changelog_topics", ArrayOf(Struct("TopicInfo", (
                        Field("name", "string", Versions(0)),
                        Field("partitions", "int32", Versions(0)),
                        Field("replication_factor", "int16", Versions(0)),
                        Field("topic_configs", ArrayOf(Struct("KeyValue", (
                            Field("key", "string", Versions(0)),
                            Field("value", "string", Versions(0)),
                        ))), Versions(0)),
                    ))), Versions(0)),
                    Field("repartition_source_topics", ArrayOf(Struct("TopicInfo", (
                        Field("name", "string", Versions(0)),
                        Field("partitions", "int32", Versions(0)),
                        Field("replication_factor", "int16", Versions(0)),
                        Field("topic_configs", ArrayOf(Struct("KeyValue", (
                            Field("key", "string", Versions(0)),
                            Field("value", "string", Versions(0)),
                        ))), Versions(0)),
                    ))), Versions(0)),
                ))), Versions(0), nullable=Versions(0), default=None),
            )), Versions(0), nullable=Versions(0), default=None),
            Field("members", ArrayOf(Struct("Member", (
                Field("member_id", "string", Versions(0)),
                Field("member_epoch", "int32", Versions(0)),
                Field("instance_id", "string", Versions(0), nullable=Versions(0), default=None),
                Field("rack_id", "string", Versions(0), nullable=Versions(0), default=None),
                Field("client_id", "string", Versions(0)),
                Field("client_host", "string", Versions(0)),
                Field("topology_epoch", "int32", Versions(0)),
                Field("process_id", "string", Versions(0)),
                Field("user_endpoint", Struct("Endpoint", (
                    Field("host", "string", Versions(0)),
                    Field("port", "uint16", Versions(0)),
                )), Versions(0), nullable=Versions(0), default=None),
                Field("client_tags", ArrayOf(Struct("KeyValue", (
                    Field("key", "string", Versions(0)),
                    Field("value", "string", Versions(0)),
                ))), Versions(0)),
                Field("task_offsets", ArrayOf(Struct("TaskOffset", (
                    Field("subtopology_id", "string", Versions(0)),
                    Field("partition", "int32", Versions(0)),
                    Field("offset", "int64", Versions(0)),
                ))), Versions(0)),
                Field("task_end_offsets", ArrayOf(Struct("TaskOffset", (
                    Field("subtopology_id", "string", Versions(0)),
                    Field("partition", "int32", Versions(0)),
                    Field("offset", "int64", Versions(0)),
                ))), Versions(0)),
                Field("assignment", Struct("Assignment", (
                    Field("active_tasks", ArrayOf(Struct("TaskIds", (
                        Field("subtopology_id", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                    Field("standby_tasks", ArrayOf(Struct("TaskIds", (
                        Field("subtopology_id", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                    Field("warmup_tasks", ArrayOf(Struct("TaskIds", (
                        Field("subtopology_id", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                )), Versions(0)),
                Field("target_assignment", Struct("Assignment", (
                    Field("active_tasks", ArrayOf(Struct("TaskIds", (
                        Field("subtopology_id", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                    Field("standby_tasks", ArrayOf(Struct("TaskIds", (
                        Field("subtopology_id", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                    Field("warmup_tasks", ArrayOf(Struct("TaskIds", (
                        Field("subtopology_id", "string", Versions(0)),
                        Field("partitions", ArrayOf("int32"), Versions(0)),
                    ))), Versions(0)),
                )), Versions(0)),
                Field("is_classic", "bool", Versions(0)),
            ))), Versions(0)),
            Field("authorized_operations", "int32", Versions(0), default=-2147483648),
            Field("topology_description", Struct("TopologyDescription", (
                Field("subtopologies", ArrayOf(Struct("TopologyDescriptionSubtopology", (
                    Field("subtopology_id", "string", Versions(1)),
                    Field("nodes", ArrayOf(Struct("TopologyDescriptionNode", (
                        Field("name", "string", Versions(1)),
                        Field("node_type", "int8", Versions(1)),
                        Field("source_topics", ArrayOf("string"), Versions(1)),
                        Field("sink_topic", "string", Versions(1), nullable=Versions(1), default=None),
                        Field("stores", ArrayOf("string"), Versions(1)),
                        Field("successors", ArrayOf("string"), Versions(1)),
                    ))), Versions(1)),
                ))), Versions(1)),
                Field("global_stores", ArrayOf(Struct("TopologyDescriptionGlobalStore", (
                    Field("source", Struct("TopologyDescriptionNode", (
                        Field("name", "string", Versions(1)),
                        Field("node_type", "int8", Versions(1)),
                        Field("source_topics", ArrayOf("string"), Versions(1)),
                        Field("sink_topic", "string", Versions(1), nullable=Versions(1), default=None),
                        Field("stores", ArrayOf("string"), Versions(1)),
                        Field("successors", ArrayOf("string"), Versions(1)),
                    )), Versions(1)),
                    Field("processor", Struct("TopologyDescriptionNode", (
                        Field("name", "string", Versions(1)),
                        Field("node_type", "int8", Versions(1)),
                        Field("source_topics", ArrayOf("string"), Versions(1)),
                        Field("sink_topic", "string", Versions(1), nullable=Versions(1), default=None),
                        Field("stores", ArrayOf("string"), Versions(1)),
                        Field("successors", ArrayOf("string"), Versions(1)),
                    )), Versions(1)),
                ))), Versions(1)),
            )), Versions(1), nullable=Versions(1), default=None),
            Field("topology_description_status", "int8", Versions(1)),
            Field("assignor_name", "string", Versions(1), nullable=Versions(1), default=None),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=89,
    name="StreamsGroupDescribe",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
