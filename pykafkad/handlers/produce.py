"""Produce (key 0): hand each partition's record batch to its log, whole, and report the offsets.

Records are never decoded here: the batch goes to the Rust log as the request's buffer,
which validates it, assigns offsets in place and checks idempotent sequences.  Versions
0-2 are advertised (librdkafka looks for them, as Kafka 4 keeps them advertised) but refused.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from pykafkad._rust_log import LogError
from pykafkad.clock import now_ms
from pykafkad.errors import KafkaError
from pykafkad.handlers.api import Api, RequestContext
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

VALID_ACKS = (-1, 0, 1)
_BATCH_LENGTH = struct.Struct(">i")  # at byte 8 of a batch: its size after these 12 bytes
_MAGIC_AT, _ATTRIBUTES_AT, _ZSTD, _CODEC_BITS = 16, 21, 4, 0x07


def _request_records_problem(version: int, records: bytes) -> tuple[ErrorCode, str] | None:
    """Kafka's ProduceRequest.validateRecords (v3+): one magic-2 batch per partition, no zstd below
    v7.  Only the first batch's fixed header is read; the log validates the rest."""
    if len(records) <= _ATTRIBUTES_AT + 1:
        return None  # too short to be a batch at all: the log answers CORRUPT_MESSAGE
    if records[_MAGIC_AT] != 2:
        return (ErrorCode.INVALID_RECORD,
                f"Produce requests with version {version} are only allowed to contain record batches "
                f"with magic version 2")
    if version < 7 and records[_ATTRIBUTES_AT + 1] & _CODEC_BITS == _ZSTD:
        return (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                f"Produce requests with version {version} are not allowed to use ZStandard compression")
    (length,) = _BATCH_LENGTH.unpack_from(records, 8)
    if 0 <= length and 12 + length < len(records):
        return (ErrorCode.INVALID_RECORD,
                f"Produce requests with version {version} are only allowed to contain exactly one record "
                f"batch per partition")
    return None


def _partition_error(index: int, code: ErrorCode | int, message: str | None = None,
                     record_errors: list[tuple[int, str]] | None = None) -> dict[str, Any]:
    # record_errors (KIP-467, v8+) name the records that failed the batch, so clients fail only those.
    return {"index": index, "error_code": code, "base_offset": -1, "log_append_time_ms": -1,
            "log_start_offset": -1, "error_message": message,
            "record_errors": [{"batch_index": i, "batch_index_error_message": m} for i, m in record_errors or ()]}


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
    acks = body["acks"]
    global_error: tuple[ErrorCode, str] | None = None
    if acks not in VALID_ACKS:
        global_error = (ErrorCode.INVALID_REQUIRED_ACKS, f"acks={acks} is not one of -1, 0, 1")
    elif body["transactional_id"] is not None:
        global_error = (ErrorCode.INVALID_REQUEST, "transactions are not supported by this broker yet")
    now = now_ms()
    appended = False
    responses = []
    for topic_data in body["topic_data"]:
        name = topic_data["name"]
        results = []
        topic = broker.topic(name)
        if topic is None and global_error is None:
            try:
                topic = await broker.maybe_auto_create(name)
            except KafkaError:
                topic = None
        for part in topic_data["partition_data"]:
            index = part["index"]
            if global_error is not None:
                results.append(_partition_error(index, *global_error))
                continue
            plog = broker.logs.get(name, index) if topic is not None else None
            if plog is None:
                results.append(_partition_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                "This server does not host this topic-partition."))
                continue
            records = part["records"]
            if records is None or len(records) == 0:
                results.append(_partition_error(index, ErrorCode.INVALID_RECORD, "no record batch was sent"))
                continue
            problem = _request_records_problem(ctx.api_version, records)
            if problem is not None:
                results.append(_partition_error(index, *problem))
                continue
            try:
                base, _last, append_time, _dup = plog.append(
                    records, leader_epoch=topic.partitions[index].leader_epoch, now_ms=now
                )
            except LogError as e:
                results.append(_partition_error(index, e.code, e.message, e.record_errors))
                continue
            appended = True
            results.append({
                "index": index, "error_code": ErrorCode.NONE, "base_offset": base,
                "log_append_time_ms": append_time, "log_start_offset": plog.log_start_offset,
                "record_errors": [], "error_message": None,
            })
        responses.append({"name": name, "partition_responses": results})
    if appended:
        broker.notify_appended()
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time_ms": 0}


APIS = [Api(0, "Produce", 0, 11, handle, reject_below=3)]
