# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the WriteTxnMarkers API (key 27): request and response bodies."""

from wire.schema import ApiSchema, ArrayOf, Field, MessageSchema, Struct, Versions

REQUEST = MessageSchema(
    name="WriteTxnMarkersRequest",
    valid=Versions(1, 2),
    flexible=Versions(1),
    fields=(
        Field("markers", ArrayOf(Struct("WritableTxnMarker", (
            Field("producer_id", "int64", Versions(0)),
            Field("producer_epoch", "int16", Versions(0)),
            Field("transaction_result", "bool", Versions(0)),
            Field("topics", ArrayOf(Struct("WritableTxnMarkerTopic", (
                Field("name", "string", Versions(0)),
                Field("partition_indexes", ArrayOf("int32"), Versions(0)),
            ))), Versions(0)),
            Field("coordinator_epoch", "int32", Versions(0)),
            Field("transaction_version", "int8", Versions(2)),
        ))), Versions(0)),
    ),
)

RESPONSE = MessageSchema(
    name="WriteTxnMarkersResponse",
    valid=Versions(1, 2),
    flexible=Versions(1),
    fields=(
        Field("markers", ArrayOf(Struct("WritableTxnMarkerResult", (
            Field("producer_id", "int64", Versions(0)),
            Field("topics", ArrayOf(Struct("WritableTxnMarkerTopicResult", (
                Field("name", "string", Versions(0)),
                Field("partitions", ArrayOf(Struct("WritableTxnMarkerPartitionResult", (
                    Field("partition_index", "int32", Versions(0)),
                    Field("error_code", "int16", Versions(0)),
                ))), Versions(0)),
            ))), Versions(0)),
        ))), Versions(0)),
    ),
)

API = ApiSchema(
    api_key=27,
    name="WriteTxnMarkers",
    request=REQUEST,
    response=RESPONSE,
    listeners=("broker",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
