# Generated from kafka-clients 4.4.0 by wire.codegen; do not edit.
"""Schemas of the AllocateProducerIds API (key 67): request and response bodies."""

from wire.schema import ApiSchema, Field, MessageSchema, Versions

REQUEST = MessageSchema(
    name="AllocateProducerIdsRequest",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("broker_id", "int32", Versions(0)),
        Field("broker_epoch", "int64", Versions(0), default=-1),
    ),
)

RESPONSE = MessageSchema(
    name="AllocateProducerIdsResponse",
    valid=Versions(0, 0),
    flexible=Versions(0),
    fields=(
        Field("throttle_time_ms", "int32", Versions(0)),
        Field("error_code", "int16", Versions(0)),
        Field("producer_id_start", "int64", Versions(0)),
        Field("producer_id_len", "int32", Versions(0)),
    ),
)

API = ApiSchema(
    api_key=67,
    name="AllocateProducerIds",
    request=REQUEST,
    response=RESPONSE,
    listeners=("controller",),
    latest_version_unstable=False,
    flexible_response_header=True,
)
