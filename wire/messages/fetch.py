# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the Fetch API (key 1): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="FetchRequest",
    valid=Versions(4, 18),
    flexible=Versions(12),
    fields=(
        Field("cluster_id", "string", Versions(12), nullable=Versions(12), tag=0, tagged=Versions(12), default=None),
        Field("replica_id", "int32", Versions(0, 14), default=-1),
        Field("replica_state", Struct("ReplicaState", (
            Field("replica_id", "int32", Versions(15), default=-1),
            Field("replica_epoch", "int64", Versions(15), default=-1),
        )), Versions(15), tag=1, tagged=Versions(15)),
        Field("max_wait_ms", "int32", Versions(0)),
        Field("min_bytes", "int32", Versions(0)),
        Field("max_bytes", "int32", Versions(3), default=2147483647),
        Field("isolation_level", "int8", Versions(4)),
        Field("session_id", "int32", Versions(7)),
        Field("session_epoch", "int32", Versions(7), default=-1),
        Field("topics", ArrayOf(Struct("FetchTopic", (
            Field("topic", "string", Versions(0, 12)),
            Field("topic_id", "uuid", Versions(13)),
            Field("partitions", ArrayOf(Struct("FetchPartition", (
                Field("partition", "int32", Versions(0)),
                Field("current_leader_epoch", "int32", Versions(9), default=-1),
                Field("fetch_offset", "int64", Versions(0)),
                Field("last_fetched_epoch", "int32", Versions(12), default=-1),
                Field("log_start_offset", "int64", Versions(5), default=-1),
                Field("partition_max_bytes", "int32", Versions(0)),
                Field("replica_directory_id", "uuid", Versions(17), tag=0, tagged=Versions(17)),
                Field("high_watermark", "int64", Versions(18), tag=1, tagged=Versions(18), default=9223372036854775807),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("forgotten_topics_data", ArrayOf(Struct("ForgottenTopic", (
            Field("topic", "string", Versions(7, 12)),
            Field("topic_id", "uuid", Versions(13)),
            Field("partitions", ArrayOf("int32"), Versions(7)),
        ))), Versions(7)),
        Field("rack_id", "string", Versions(11)),
    ),
)

RESPONSE = MessageSchema(
    name="FetchResponse",
    valid=Versions(4, 18),
    flexible=Versions(12),
    fields=(
        Field("throttle_time_ms", "int32", Versions(1)),
        Field("error_code", "int16", Versions(7)),
        Field("session_id", "int32", Versions(7)),
        Field("responses", ArrayOf(Struct("FetchableTopicResponse", (
            Field("topic", "string", Versions(0, 12)),
            Field("topic_id", "uuid", Versions(13)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("high_watermark", "int64", Versions(0)),
                Field("last_stable_offset", "int64", Versions(4), default=-1),
                Field("log_start_offset", "int64", Versions(5), default=-1),
                Field("diverging_epoch", Struct("EpochEndOffset", (
                    Field("epoch", "int32", Versions(12), default=-1),
                    Field("end_offset", "int64", Versions(12), default=-1),
                )), Versions(12), tag=0, tagged=Versions(12)),
                Field("current_leader", Struct("LeaderIdAndEpoch", (
                    Field("leader_id", "int32", Versions(12), default=-1),
                    Field("leader_epoch", "int32", Versions(12), default=-1),
                )), Versions(12), tag=1, tagged=Versions(12)),
                Field("snapshot_id", Struct("SnapshotId", (
                    Field("end_offset", "int64", Versions(0), default=-1),
                    Field("epoch", "int32", Versions(0), default=-1),
                )), Versions(12), tag=2, tagged=Versions(12)),
                Field("aborted_transactions", ArrayOf(Struct("AbortedTransaction", (
                    Field("producer_id", "int64", Versions(4)),
                    Field("first_offset", "int64", Versions(4)),
                ))), Versions(4), nullable=Versions(4)),
                Field("preferred_read_replica", "int32", Versions(11), default=-1),
                Field("records", "records", Versions(0), nullable=Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("node_endpoints", ArrayOf(Struct("NodeEndpoint", (
            Field("node_id", "int32", Versions(16)),
            Field("host", "string", Versions(16)),
            Field("port", "int32", Versions(16)),
            Field("rack", "string", Versions(16), nullable=Versions(16), default=None),
        ))), Versions(16), tag=0, tagged=Versions(16)),
    ),
)

API = ApiSchema(
    api_key=1,
    name="Fetch",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker", "controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
