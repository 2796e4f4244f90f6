# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the DeleteRecords API (key 21): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="DeleteRecordsRequest",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("topics", ArrayOf(Struct("DeleteRecordsTopic", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("DeleteRecordsPartition", (
                Field("partition_index", "int32", Versions(0)),
                Field("offset", "int64", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
        Field("timeout_ms", "int32", Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="DeleteRecordsResponse",
    valid=Versions(0, 2),
    flexible=Versions(2),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("topics", ArrayOf(Struct("DeleteRecordsTopicResult", (
            Field("name", "string", Versions(0)),
            Field("partitions", ArrayOf(Struct("DeleteRecordsPartitionResult", (
                Field("partition_index", "int32", Versions(0)),
                Field("low_watermark", "int64", Versions(0)),
                Field("error_code", "int16", Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=21,
    name="DeleteRecords",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
