"""Fetch (key 1): batch-aligned reads below the high watermark, with long-poll on min bytes / max wait.

read_committed consumers read below the last stable offset instead, and get the aborted
transactions of the range; they drop those records themselves, as with Kafka.

The bytes for each partition come from the Rust log in one buffer, never record by record.
The first batch of the response is always returned whole, even when it is larger than
the limits (KIP-74).  Fetch sessions (KIP-227) are not kept: every answer carries session
id 0, which tells clients to send full fetch requests.  As in Kafka's FetchManager, a request with
session epoch 0 (open a session) or -1 (FINAL_EPOCH: no session, as kafka-go's Client.Fetch sends
it) is a full fetch whatever its session id, which only names a session to close; any other epoch
is an incremental fetch on the session named, which pykafkad never has: FETCH_SESSION_ID_NOT_FOUND.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.leader_hints import FETCH_HINTED, LeaderHints
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.observability.request_timing import count_partition_error
from pykafkad.replica.replica_manager import FetchedData, FetchEntry
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

INT32_MAX = 2**31 - 1
TOPIC_IDS_FROM = 13
REPLICA_STATE_FROM = 15
ZSTD_FROM = 10  # older fetchers get UNSUPPORTED_COMPRESSION_TYPE for zstd batches, as from Kafka
SESSIONS_FROM = 7
INITIAL_EPOCH, FINAL_EPOCH = 0, -1  # Kafka's FetchMetadata: the epochs of a full fetch


def _partition_entry(index: int, data: FetchedData) -> dict[str, Any]:
    entry = {"partition_index": index, "error_code": data.error, "high_watermark": data.high_watermark,
             "last_stable_offset": data.last_stable_offset, "log_start_offset": data.log_start_offset,
             "aborted_transactions": None if data.aborted_transactions is None else [
                 {"producer_id": pid, "first_offset": first} for pid, first in data.aborted_transactions],
             "preferred_read_replica": -1, "records": data.records}
    if data.diverging_epoch is not None:
        entry["diverging_epoch"] = {"epoch": data.diverging_epoch[0], "end_offset": data.diverging_epoch[1]}
    return entry


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    version = ctx.api_version
    if version >= SESSIONS_FROM and body["session_epoch"] not in (INITIAL_EPOCH, FINAL_EPOCH):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
                "session_id": 0, "responses": []}
    by_id = version >= TOPIC_IDS_FROM
    # Per requested topic: its response entry and, per partition, (index, its answer or its entry's place).
    layout: list[tuple[dict[str, Any], list[tuple[int, FetchedData | int]]]] = []
    entries: list[FetchEntry] = []
    unknown_topic = False
    # A broker's replica fetcher names itself (Kafka 4's consumers send -1).
    replica_id = body["replica_state"]["replica_id"] if version >= REPLICA_STATE_FROM else body["replica_id"]
    # Followers need CLUSTER_ACTION on the cluster, consumers READ on each topic.
    follower_denied = replica_id >= 0 and not cluster_allowed(broker, ctx, Operation.CLUSTER_ACTION)
    for wanted in body["topics"]:
        topic = (broker.metadata.topics_by_id.get(wanted["topic_id"]) if by_id
                 else broker.topic(wanted["topic"]))
        name = topic.name if topic is not None else wanted.get("topic")
        denied = follower_denied or (replica_id < 0 and name is not None
                                     and not allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, name))
        slots: list[tuple[int, FetchedData | int]] = []
        for part in wanted["partitions"]:
            if denied:
                unknown_topic = True
                slots.append((part["partition"], FetchedData(ErrorCode.TOPIC_AUTHORIZATION_FAILED)))
                continue
            if topic is None:
                unknown_topic = True
                missing = ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                slots.append((part["partition"], FetchedData(missing)))
                continue
            slots.append((part["partition"], len(entries)))
            entries.append(FetchEntry(topic.name, part["partition"], part["fetch_offset"],
                                      part["current_leader_epoch"], part["partition_max_bytes"],
                                      part.get("last_fetched_epoch", -1)))
        entry: dict[str, Any] = {"topic_id": wanted["topic_id"]} if by_id else {"topic": wanted["topic"]}
        layout.append((entry, slots))
    # A partition that errors answers at once, as Kafka does: no long-poll with an unknown topic.
    results = await broker.replicas.fetch_messages(
        entries, body["max_bytes"] if version >= 3 else INT32_MAX, body["min_bytes"],
        0 if unknown_topic else body["max_wait_ms"], allow_zstd=version >= ZSTD_FROM, replica_id=replica_id,
        read_committed=body["isolation_level"] == 1, zero_copy=ctx.zero_copy)
    responses = []
    hints = LeaderHints(broker, FETCH_HINTED, ctx.listener)
    for (entry, slots), wanted in zip(layout, body["topics"], strict=True):
        entry["partitions"] = []
        topic = broker.metadata.topics_by_id.get(wanted["topic_id"]) if by_id else broker.topic(wanted["topic"])
        name = topic.name if topic is not None else wanted.get("topic") or str(wanted.get("topic_id"))
        for index, slot in slots:
            data = slot if isinstance(slot, FetchedData) else results[slot]
            if data.error != ErrorCode.NONE:
                count_partition_error("Fetch", name, data.error, metrics.FAILED_FETCH)
            elif data.records:
                counter = metrics.REPLICATION_BYTES_OUT if replica_id >= 0 else metrics.BYTES_OUT
                metrics.for_topic(counter, name).inc(len(data.records))
            answer = _partition_entry(index, data)
            leader = hints.current_leader(topic.name, index, data.error) if topic is not None else None
            if leader is not None:
                answer["current_leader"] = leader
            entry["partitions"].append(answer)
        responses.append(entry)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "session_id": 0, "responses": responses,
            "node_endpoints": hints.node_endpoints()}


APIS = [Api(1, "Fetch", 4, 17, handle)]
