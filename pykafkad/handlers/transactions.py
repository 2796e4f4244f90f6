"""The transactional producer's APIs, answered by the transaction coordinator:
AddPartitionsToTxn (24; v0-3 from clients, v4-5 from partition leaders verifying a transaction
or adding a partition to it), AddOffsetsToTxn (25, v0-4), EndTxn (26; v0-4 transaction version 1,
v5 version 2, which bumps the epoch and answers the producer id and epoch to go on with) and
TxnOffsetCommit (28, v0-5, through the group coordinator); and what ``kafka-transactions.sh``
asks: ListTransactions (66, v0-1), DescribeTransactions (65) and DescribeProducers (61).

Versions before 2 know no PRODUCER_FENCED: they get INVALID_PRODUCER_EPOCH instead, as from Kafka
(librdkafka sends exactly those versions).  An AddPartitionsToTxn naming a partition that does not
exist changes nothing: that partition gets UNKNOWN_TOPIC_OR_PARTITION and the others
OPERATION_NOT_ATTEMPTED.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.offsets_store import OFFSETS_TOPIC
from pykafkad.coordinator.group.requests import CommitTransactionalOffsets
from pykafkad.coordinator.transaction.transaction_metadata import TV_2, TransactionState
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.topic_ids import NO_TOPIC_ID, named_topics, unknown_topic_results
from pykafkad.regular_expression import whole_name_matcher
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

FENCED_FROM = 2
BROKER_FORM_FROM = 4
# EndTxn from this version is transaction version 2 (Kafka's transactionVersionForEndTxn).
END_TXN_BUMPS_FROM = 5
# TxnOffsetCommit v4+ clients know TRANSACTION_ABORTABLE; v5 adds the offsets partition itself.
TXN_OFFSET_COMMIT_ABORTABLE_FROM = 4
TXN_OFFSET_COMMIT_ADDS_FROM = 5
# From TxnOffsetCommit v6 (KIP-1319) topics are named by id only.
TXN_COMMIT_BY_TOPIC_ID_FROM = 6


def fenced_shim(code: ErrorCode, version: int, since: int = FENCED_FROM) -> ErrorCode:
    """PRODUCER_FENCED as an older request version knows it."""
    return ErrorCode.INVALID_PRODUCER_EPOCH if code == ErrorCode.PRODUCER_FENCED and version < since else code


def _txn_writable(broker: Broker, ctx: RequestContext, txn_id: str) -> bool:
    return allowed(broker, ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id)


async def add_partitions(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if ctx.api_version >= BROKER_FORM_FROM:
        if not cluster_allowed(broker, ctx, Operation.CLUSTER_ACTION):
            return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                    "results_by_transaction": []}
        return await _add_partitions_batched(broker, body)
    wanted = [(t["name"], p) for t in body["v3_and_below_topics"] for p in t["partitions"]]
    unknown = set()
    denied = set()
    txn_denied = not _txn_writable(broker, ctx, body["v3_and_below_transactional_id"])
    for name, index in wanted:
        topic = broker.topic(name)
        if not allowed(broker, ctx, Operation.WRITE, ResourceType.TOPIC, name):
            denied.add((name, index))
        elif topic is None or not 0 <= index < len(topic.partitions):
            unknown.add((name, index))
    if txn_denied:
        codes = dict.fromkeys(wanted, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    elif denied:
        codes = {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp in denied else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                 if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED for tp in wanted}
    elif unknown:
        codes = {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED
                 for tp in wanted}
    else:
        code = await broker.transactions.add_partitions(
            body["v3_and_below_transactional_id"], body["v3_and_below_producer_id"],
            body["v3_and_below_producer_epoch"], set(wanted))
        code = fenced_shim(code, ctx.api_version)
        codes = dict.fromkeys(wanted, code)
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (name, index), code in codes.items():
        by_topic.setdefault(name, []).append({"partition_index": index, "partition_error_code": code})
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": [
        {"name": name, "results_by_partition": results} for name, results in by_topic.items()]}


async def _add_partitions_batched(broker: Broker, body: dict[str, Any]) -> dict[str, Any]:
    """v4+, sent by partition leaders: several transactions at once, each added or (``verify_only``)
    only checked (KIP-890)."""
    results = []
    for txn in body["transactions"]:
        wanted = {(t["name"], p) for t in txn["topics"] for p in t["partitions"]}
        if txn["verify_only"]:
            codes = await broker.transactions.verify(txn["transactional_id"], txn["producer_id"],
                                                     txn["producer_epoch"], wanted)
        else:
            code = await broker.transactions.add_partitions(txn["transactional_id"], txn["producer_id"],
                                                            txn["producer_epoch"], wanted, TV_2)
            codes = dict.fromkeys(wanted, code)
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (name, index), code in sorted(codes.items()):
            by_topic.setdefault(name, []).append({"partition_index": index, "partition_error_code": code})
        results.append({"transactional_id": txn["transactional_id"], "topic_results": [
            {"name": name, "results_by_partition": parts} for name, parts in by_topic.items()]})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": results}


async def add_offsets(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not _txn_writable(broker, ctx, body["transactional_id"]):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    if not allowed(broker, ctx, Operation.READ, ResourceType.GROUP, body["group_id"]):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    offsets_partition = (OFFSETS_TOPIC, broker.groups.partition_for(body["group_id"]))
    code = await broker.transactions.add_partitions(body["transactional_id"], body["producer_id"],
                                                    body["producer_epoch"], {offsets_partition})
    return {"throttle_time_ms": 0, "error_code": fenced_shim(code, ctx.api_version)}


async def end_txn(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not _txn_writable(broker, ctx, body["transactional_id"]):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                "producer_id": -1, "producer_epoch": -1}
    code, producer_id, epoch = await broker.transactions.end_transaction(
        body["transactional_id"], body["producer_id"], body["producer_epoch"], body["committed"],
        bump_epoch=ctx.api_version >= END_TXN_BUMPS_FROM)
    return {"throttle_time_ms": 0, "error_code": fenced_shim(code, ctx.api_version),
            "producer_id": producer_id, "producer_epoch": epoch}


async def txn_offset_commit(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    """The group coordinator writes the offsets in the producer's transaction; they count once its
    COMMIT marker reaches the group's ``__consumer_offsets`` partition."""
    named, unknown = named_topics(broker, body["topics"], ctx.api_version >= TXN_COMMIT_BY_TOPIC_ID_FROM)
    body = {**body, "topics": named}
    every = [(t["name"], p["partition_index"]) for t in body["topics"] for p in t["partitions"]]
    refused: ErrorCode | None = None
    if not _txn_writable(broker, ctx, body["transactional_id"]):
        refused = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not allowed(broker, ctx, Operation.READ, ResourceType.GROUP, body["group_id"]):
        refused = ErrorCode.GROUP_AUTHORIZATION_FAILED
    readable = [t for t in body["topics"] if allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, t["name"])]
    results = dict.fromkeys(every, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    if refused is None and readable:
        refused = await _offsets_partition_not_in_transaction(broker, ctx.api_version, body)
    if refused is not None:
        results = dict.fromkeys(every, refused)
    elif readable:
        request = CommitTransactionalOffsets(
            version=ctx.api_version, generation_id=body["generation_id_or_member_epoch"],
            member_id=body.get("member_id") or "", group_instance_id=body.get("group_instance_id"),
            topics=readable, producer_id=body["producer_id"], producer_epoch=body["producer_epoch"])
        results.update((await broker.groups.call(body["group_id"], request))["results"])
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (name, index), code in results.items():
        by_topic.setdefault(name, []).append({"partition_index": index, "error_code": code})
    ids = {t["name"]: t.get("topic_id", NO_TOPIC_ID) for t in named}
    return {"throttle_time_ms": 0, "topics": [
        {"name": name, "topic_id": ids[name], "partitions": parts} for name, parts in by_topic.items()]
        + unknown_topic_results(unknown)}


async def _offsets_partition_not_in_transaction(broker: Broker, version: int,
                                                body: dict[str, Any]) -> ErrorCode | None:
    """KIP-890 for TxnOffsetCommit, on the group's coordinator: up to v4 the group's offsets
    partition must be in the transaction (AddOffsetsToTxn); v5 adds it (transaction version 2).
    None when the offsets may be written (or another broker coordinates the group, which the
    group coordinator answers), else the error for every partition."""
    partition = broker.replicas.get(OFFSETS_TOPIC, broker.groups.partition_for(body["group_id"]))
    if partition is None or not partition.is_leader:
        return None
    code = await broker.txn_verifier.verify(body["transactional_id"], (body["producer_id"], body["producer_epoch"]),
                                            partition, add=version >= TXN_OFFSET_COMMIT_ADDS_FROM)
    if code == ErrorCode.NONE:
        return None
    if code == ErrorCode.INVALID_TXN_STATE and version >= TXN_OFFSET_COMMIT_ABORTABLE_FROM:
        return ErrorCode.TRANSACTION_ABORTABLE
    return code


async def list_transactions(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    """The transactional ids this broker coordinates (``kafka-transactions.sh list`` asks every
    broker), filtered by state, producer id, (v1) how long their transaction has been open and (v2)
    a pattern of their ids."""
    known = {s.kafka_name for s in TransactionState}
    pattern = body.get("transactional_id_pattern")
    try:
        # v2 (KIP-1152): an RE2 pattern the whole id must match; empty or null lists every id.
        id_matches = whole_name_matcher(pattern) if pattern else None
    except KafkaError as e:
        return {"throttle_time_ms": 0, "error_code": e.code, "unknown_state_filters": [], "transaction_states": []}
    states = set(body["state_filters"])
    producers = set(body["producer_id_filters"])
    min_duration = body.get("duration_filter", -1)
    now = int(time.time() * 1000)
    found = []
    for meta in broker.transactions.transactions():
        if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, meta.transactional_id,
                       log_denial=False):
            continue
        if id_matches is not None and not id_matches(meta.transactional_id):
            continue
        if states and meta.state.kafka_name not in states:
            continue
        if producers and meta.producer_id not in producers:
            continue
        if min_duration >= 0 and (meta.state != TransactionState.ONGOING or now - meta.start_ms < min_duration):
            continue
        found.append({"transactional_id": meta.transactional_id, "producer_id": meta.producer_id,
                      "transaction_state": meta.state.kafka_name})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
            "unknown_state_filters": sorted(states - known), "transaction_states": found}


async def describe_transactions(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    states = []
    for txn_id in body["transactional_ids"]:
        if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, txn_id):
            code, meta = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None
        else:
            code, meta = await broker.transactions.describe(txn_id)
        if meta is None:
            states.append({"error_code": code, "transactional_id": txn_id, "transaction_state": "",
                           "transaction_timeout_ms": 0, "transaction_start_time_ms": -1, "producer_id": -1,
                           "producer_epoch": -1, "topics": []})
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(meta.partitions):
            if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, topic, log_denial=False):
                continue
            by_topic.setdefault(topic, []).append(index)
        states.append({"error_code": ErrorCode.NONE, "transactional_id": txn_id,
                       "transaction_state": meta.state.kafka_name, "transaction_timeout_ms": meta.timeout_ms,
                       "transaction_start_time_ms": meta.start_ms, "producer_id": meta.producer_id,
                       "producer_epoch": meta.producer_epoch,
                       "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]})
    return {"throttle_time_ms": 0, "transaction_states": states}


async def describe_producers(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    """The producers of each partition as its leader's log knows them (``kafka-transactions.sh
    describe-producers`` and ``find-hanging``)."""
    topics = []
    for wanted in body["topics"]:
        partitions = []
        for index in wanted["partition_indexes"]:
            entry: dict[str, Any] = {"partition_index": index, "error_code": ErrorCode.NONE, "error_message": None,
                                     "active_producers": []}
            try:
                if not allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, wanted["name"]):
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                partition = broker.replicas.leader(wanted["name"], index)
            except KafkaError as e:
                entry["error_code"] = e.code
                partitions.append(entry)
                continue
            entry["active_producers"] = [
                {"producer_id": pid, "producer_epoch": epoch, "last_sequence": seq, "last_timestamp": ts,
                 "coordinator_epoch": coordinator_epoch, "current_txn_start_offset": txn_start}
                for pid, epoch, seq, ts, coordinator_epoch, txn_start in partition.log.producer_states()]
            partitions.append(entry)
        topics.append({"name": wanted["name"], "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}


APIS = [
    Api(24, "AddPartitionsToTxn", 0, 5, add_partitions),
    Api(25, "AddOffsetsToTxn", 0, 4, add_offsets),
    Api(26, "EndTxn", 0, 5, end_txn),
    Api(28, "TxnOffsetCommit", 0, 6, txn_offset_commit),
    Api(61, "DescribeProducers", 0, 0, describe_producers),
    Api(65, "DescribeTransactions", 0, 0, describe_transactions),
    Api(66, "ListTransactions", 0, 2, list_transactions),
]
