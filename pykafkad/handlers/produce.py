"""Produce (key 0): hand each partition's record batch to its log, whole, and report the offsets.

Records are never decoded here: each partition's batch goes to the replica manager as the
request's buffer, and on to the Rust log, which validates it, assigns offsets in place and checks
idempotent sequences.  A producer's first transactional batch in a partition is appended only if the
transaction coordinator says the partition is in its transaction (KIP-890 part 1); from v12 the
leader adds the partition to the transaction itself (part 2, transaction version 2).  Versions
0-2 are advertised (librdkafka looks for them, as Kafka 4 keeps them advertised) but refused.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from pykafkad._rust_log import LogError
from pykafkad.clock import now_ms
from pykafkad.coordinator.transaction.verification import base_sequence, transactional_producer
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.leader_hints import PRODUCE_HINTED, LeaderHints
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.observability.request_timing import count_partition_error
from pykafkad.replica.partition import AppendInfo
from pykafkad.replica.replica_manager import NOT_HOSTED, ProduceEntry
from pykafkad.schema_registry.validation_policy import FieldPolicy, field_policies
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

VALID_ACKS = (-1, 0, 1)
# Produce v11+ clients know TRANSACTION_ABORTABLE; older ones get INVALID_TXN_STATE (KIP-890).
ABORTABLE_FROM = 11
# From v12 a transactional batch's partition is added to the transaction by its leader.
IMPLICIT_ADD_FROM = 12
# From v13 topics are named by id (KIP-516), as Kafka 4.1 produces.
TOPIC_IDS_FROM = 13
NOT_IN_TRANSACTION = (ErrorCode.INVALID_TXN_STATE, ErrorCode.TRANSACTION_ABORTABLE)
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


def _count(answers: list[tuple[str, list[dict[str, Any] | int]]], entries: list[ProduceEntry],
           outcomes: list[Any]) -> None:
    """Kafka's BrokerTopicMetrics and ErrorsPerSec for this request: once per partition, not per record."""
    for name, results in answers:
        for result in results:
            if isinstance(result, dict):
                if not name:
                    continue  # an unknown topic id: no topic to count it for
                count_partition_error("Produce", name, result["error_code"], metrics.FAILED_PRODUCE)
                continue
            outcome = outcomes[result]
            if isinstance(outcome, AppendInfo):
                metrics.for_topic(metrics.BYTES_IN, name).inc(len(entries[result].records))
                metrics.for_topic(metrics.MESSAGES_IN, name).inc(outcome.last_offset - outcome.base_offset + 1)
            else:
                if isinstance(outcome, LogError):
                    metrics.for_topic(metrics.BYTES_REJECTED, name).inc(len(entries[result].records))
                count_partition_error("Produce", name, outcome.code, metrics.FAILED_PRODUCE)


async def _schema_refusal(broker: Broker, topic: str, index: int, policies: tuple[FieldPolicy, ...],
                          records: bytes | memoryview) -> dict[str, Any] | None:
    """The answer for a batch that the topic's schema validation refuses (INVALID_RECORD with each
    refused record), or None if it passes."""
    from pykafkad.schema_registry.schema_source import SchemasUnavailable
    try:
        refused = await broker.record_validator().refused(topic, policies, records)
    except SchemasUnavailable as e:
        # Retriable: the producer tries again, as for a leader that is not ready.
        return _partition_error(index, ErrorCode.REQUEST_TIMED_OUT, f"schema validation of {topic}: {e}")
    except LogError as e:
        return _partition_error(index, e.code, e.message)
    if not refused:
        return None
    metrics.for_topic(metrics.SCHEMA_REFUSED, topic).inc(len(refused))
    first, reason = refused[0]
    return _partition_error(index, ErrorCode.INVALID_RECORD,
                            f"{len(refused)} record(s) refused by the schema validation of topic {topic}; "
                            f"record {first}: {reason}",
                            [(i, f"record {i}: {why}") for i, why in refused])


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
    acks = body["acks"]
    global_error: tuple[ErrorCode, str] | None = None
    if acks not in VALID_ACKS:
        global_error = (ErrorCode.INVALID_REQUIRED_ACKS, f"acks={acks} is not one of -1, 0, 1")
    elif body["transactional_id"] is not None and not allowed(broker, ctx, Operation.WRITE,
                                                              ResourceType.TRANSACTIONAL_ID, body["transactional_id"]):
        global_error = (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None)
    # (topic name, [partition answer, or the index of its entry in `entries`])
    answers: list[tuple[str, list[dict[str, Any] | int]]] = []
    entries: list[ProduceEntry] = []
    by_id = ctx.api_version >= TOPIC_IDS_FROM
    for topic_data in body["topic_data"]:
        if by_id:
            # v13 (KIP-516) names topics by id: an unknown id is never created.
            known = broker.metadata.topics_by_id.get(topic_data["topic_id"])
            if known is None:
                answers.append(("", [_partition_error(p["index"], ErrorCode.UNKNOWN_TOPIC_ID)
                                     for p in topic_data["partition_data"]]))
                continue
            name = known.name
        else:
            name = topic_data["name"]
        results: list[dict[str, Any] | int] = []
        if global_error is None and not allowed(broker, ctx, Operation.WRITE, ResourceType.TOPIC, name):
            answers.append((name, [_partition_error(p["index"], ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                   for p in topic_data["partition_data"]]))
            continue
        topic = broker.topic(name)
        if topic is None and global_error is None and not by_id and (
                cluster_allowed(broker, ctx, Operation.CREATE, log_denial=False)
                or allowed(broker, ctx, Operation.CREATE, ResourceType.TOPIC, name)):
            # pykafkad creates a produced-to topic when auto.create.topics.enable allows; who may
            # create it is decided as for Metadata's auto-creation.
            try:
                topic = await broker.controller.maybe_auto_create(name)
            except KafkaError:
                topic = None
        for part in topic_data["partition_data"]:
            index = part["index"]
            if global_error is not None:
                results.append(_partition_error(index, *global_error))
                continue
            if topic is None or not 0 <= index < len(topic.partitions):
                results.append(_partition_error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED))
                continue
            records = part["records"]
            if records is None or len(records) == 0:
                results.append(_partition_error(index, ErrorCode.INVALID_RECORD, "no record batch was sent"))
                continue
            problem = _request_records_problem(ctx.api_version, records)
            if problem is not None:
                results.append(_partition_error(index, *problem))
                continue
            policies = field_policies(topic.configs) if topic.configs else ()
            if policies:
                refusal = await _schema_refusal(broker, name, index, policies, records)
                if refusal is not None:
                    results.append(refusal)
                    continue
            txn = transactional_producer(records) if body["transactional_id"] is not None else None
            partition = broker.replicas.get(name, index) if txn is not None else None
            if txn is not None and partition is not None and partition.is_leader:
                code = await broker.txn_verifier.verify(body["transactional_id"], txn, partition,
                                                        add=ctx.api_version >= IMPLICIT_ADD_FROM,
                                                        sequence=base_sequence(records))
                if code == ErrorCode.INVALID_TXN_STATE and ctx.api_version >= ABORTABLE_FROM:
                    code = ErrorCode.TRANSACTION_ABORTABLE
                if code != ErrorCode.NONE:
                    results.append(_partition_error(index, code, f"{name}-{index} is not in the transaction of "
                                                    f"{body['transactional_id']!r}"
                                                    if code in NOT_IN_TRANSACTION else None))
                    continue
            results.append(len(entries))
            entries.append(ProduceEntry(name, index, records))
        answers.append((name, results))
    outcomes = await broker.replicas.append_records(entries, acks, body["timeout_ms"], now_ms()) if entries else []
    _count(answers, entries, outcomes)
    if acks == 0:
        return None
    responses = []
    hints = LeaderHints(broker, PRODUCE_HINTED, ctx.listener)
    for (name, results), topic_data in zip(answers, body["topic_data"], strict=True):
        partition_responses = []
        for result in results:
            if isinstance(result, dict):
                partition_responses.append(result)
                continue
            entry, outcome = entries[result], outcomes[result]
            if isinstance(outcome, LogError):
                partition_responses.append(_partition_error(entry.index, outcome.code, outcome.message,
                                                            outcome.record_errors))
            elif isinstance(outcome, KafkaError):
                answer = _partition_error(entry.index, outcome.code, outcome.message)
                leader = hints.current_leader(name, entry.index, outcome.code)
                if leader is not None:
                    answer["current_leader"] = leader
                partition_responses.append(answer)
            else:
                partition_responses.append({
                    "index": entry.index, "error_code": ErrorCode.NONE, "base_offset": outcome.base_offset,
                    "log_append_time_ms": outcome.log_append_time_ms,
                    "log_start_offset": outcome.log_start_offset, "record_errors": [], "error_message": None,
                })
        key = {"topic_id": topic_data["topic_id"]} if by_id else {"name": name}
        responses.append({**key, "partition_responses": partition_responses})
    return {"responses": responses, "throttle_time_ms": 0, "node_endpoints": hints.node_endpoints()}


APIS = [Api(0, "Produce", 0, 13, handle, reject_below=3)]
