"""Fetch (key 1): batch-aligned reads from the logs, with long-poll on min bytes / max wait.

The bytes for each partition come from the Rust log in one buffer, never record by record.
The first batch of the response is always returned whole, even when it is larger than
the limits (KIP-74).  Fetch sessions (KIP-227) are not kept: every answer carries session
id 0, which tells clients to send full fetch requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from pykafkad._rust_log import LogError
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.leader_epochs import check_leader_epoch
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

INT32_MAX = 2**31 - 1
TOPIC_IDS_FROM = 13
ZSTD_FROM = 10  # older fetchers get UNSUPPORTED_COMPRESSION_TYPE for zstd batches, as from Kafka


def _partition_error(index: int, code: ErrorCode | int) -> dict[str, Any]:
    return {"partition_index": index, "error_code": code, "high_watermark": -1, "last_stable_offset": -1,
            "log_start_offset": -1, "aborted_transactions": None, "preferred_read_replica": -1,
            "records": b""}


def _read_all(broker: Broker, body: dict[str, Any], version: int) -> tuple[list[dict[str, Any]], int, bool]:
    """One pass over the requested partitions: (topic responses, bytes read, any partition errored)."""
    remaining = body["max_bytes"] if version >= 3 else INT32_MAX
    total = 0
    errored = False
    responses = []
    by_id = version >= TOPIC_IDS_FROM
    allow_zstd = version >= ZSTD_FROM
    for wanted in body["topics"]:
        topic = (broker.metadata.topics_by_id.get(wanted["topic_id"]) if by_id
                 else broker.topic(wanted["topic"]))
        missing = ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partitions = []
        for part in wanted["partitions"]:
            index = part["partition"]
            plog = broker.logs.get(topic.name, index) if topic is not None else None
            if plog is None:
                errored = True
                partitions.append(_partition_error(
                    index, missing if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            epoch_error = check_leader_epoch(part["current_leader_epoch"], topic.partitions[index].leader_epoch)
            if epoch_error is not None:
                errored = True
                partitions.append(_partition_error(index, epoch_error))
                continue
            limit = max(0, min(part["partition_max_bytes"], remaining))
            try:
                data = plog.read(part["fetch_offset"], limit, min_one=(total == 0), allow_zstd=allow_zstd)
            except LogError as e:
                errored = True
                partitions.append(_partition_error(index, e.code))
                continue
            total += len(data)
            remaining -= len(data)
            end = plog.log_end_offset
            partitions.append({
                "partition_index": index, "error_code": ErrorCode.NONE, "high_watermark": end,
                "last_stable_offset": end, "log_start_offset": plog.log_start_offset,
                "aborted_transactions": None, "preferred_read_replica": -1, "records": data,
            })
        entry: dict[str, Any] = {"partitions": partitions}
        if by_id:
            entry["topic_id"] = wanted["topic_id"]
        else:
            entry["topic"] = wanted["topic"]
        responses.append(entry)
    return responses, total, errored


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.api_version >= 7 and body["session_id"] != 0:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
                "session_id": 0, "responses": []}
    deadline = trio.current_time() + max(0, body["max_wait_ms"]) / 1000
    min_bytes = body["min_bytes"]
    while True:
        responses, total, errored = _read_all(broker, body, ctx.api_version)
        left = deadline - trio.current_time()
        if total >= min_bytes or errored or left <= 0 or broker.shutting_down.is_set():
            return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "session_id": 0,
                    "responses": responses}
        await broker.wait_for_data(left)


APIS = [Api(1, "Fetch", 4, 17, handle)]
