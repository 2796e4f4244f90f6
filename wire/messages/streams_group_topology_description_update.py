# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the StreamsGroupTopologyDescriptionUpdate API (key 93): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="StreamsGroupTopologyDescriptionUpdateRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("group_id", "string", Versions(0)),
        Field("member_id", "string", Versions(0)),
        Field("topology_epoch", "int32", Versions(0)),
        Field("topology_description", Struct("TopologyDescription", (
            Field("subtopologies", ArrayOf(Struct("TopologyDescriptionSubtopology", (
                Field("subtopology_id", "string", Versions(0)),
                Field("nodes", ArrayOf(Struct("TopologyDescriptionNode", (
                    Field("name", "string", Versions(0)),
                    Field("node_type", "int8", Versions(0)),
                    Field("source_topics", ArrayOf("string"), Versions(0)),
                    Field("sink_topic", "string", Versions(0), nullable=Versions(0), default=None),
                    Field("stores", ArrayOf("string"), Versions(0)),
                    Field("successors", ArrayOf("string"), Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
            Field("global_stores", ArrayOf(Struct("TopologyDescriptionGlobalStore", (
                Field("source", Struct("TopologyDescriptionNode", (
                    Field("name", "string", Versions(0)),
                    Field("node_type", "int8", Versions(0)),
                    Field("source_topics", ArrayOf("string"), Versions(0)),
                    Field("sink_topic", "string", Versions(0), nullable=Versions(0), default=None),
                    Field("stores", ArrayOf("string"), Versions(0)),
                    Field("successors", ArrayOf("string"), Versions(0)),
                )), Versions(0)),
                Field("processor", Struct("TopologyDescriptionNode", (
                    Field("name", "string", Versions(0)),
                    Field("node_type", "int8", Versions(0)),
                    Field("source_topics", ArrayOf("string"), Versions(0)),
                    Field("sink_topic", "string", Versions(0), nullable=Versions(0), default=None),
                    Field("stores", ArrayOf("string"), Versions(0)),
                    Field("successors", ArrayOf("string"), Versions(0)),
                )), Versions(0)),
            ))), Versions(0)),
        )), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="StreamsGroupTopologyDescriptionUpdateResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("error_message", "string", Versions(0), nullable=Versions(0), default=None),
    ),
)

API = ApiSchema(
    api_key=93,
    name="StreamsGroupTopologyDescriptionUpdate",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
