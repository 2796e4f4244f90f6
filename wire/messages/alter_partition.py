# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AlterPartition API (key 56): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="AlterPartitionRequest",
    valid=Versions(2, 3),
    flexible=Versions(0),
    fields=(
        Field("broker_id", "int32", Versions(0)),
        Field("broker_epoch", "int64", Versions(0), default=-1),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_id", "uuid", Versions(2)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
                Field("new_isr", ArrayOf("int32"), Versions(0, 2)),
                Field("new_isr_with_epochs", ArrayOf(Struct("BrokerState", (
                    Field("broker_id", "int32", Versions(3)),
                    Field("broker_epoch", "int64", Versions(3), default=-1),
                ))), Versions(3)),
                Field("leader_recovery_state", "int8", Versions(1)),
                Field("partition_epoch", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="AlterPartitionResponse",
    valid=Versions(2, 3),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("topics", ArrayOf(Struct("TopicData", (
            Field("topic_id", "uuid", Versions(2)),
            Field("partitions", ArrayOf(Struct("PartitionData", (
                Field("partition_index", "int32", Versions(0)),
                Field("error_code", "int16", Versions(0)),
                Field("leader_id", "int32", Versions(0)),
                Field("leader_epoch", "int32", Versions(0)),
                Field("isr", ArrayOf("int32"), Versions(0)),
                Field("leader_recovery_state", "int8", Versions(1)),
                Field("partition_epoch", "int32", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=56,
    name="AlterPartition",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
