"""Fetch (key 1): batch-aligned reads below the high watermark, with long-poll on min bytes / max wait.

read_committed consumers read below the last stable offset instead, and get the aborted
transactions of the range; they drop those records themselves, as with Kafka.

The bytes for each partition come from the Rust log in one buffer, never record by record.
The first batch of the response is always returned whole, even when it is larger than
the limits (KIP-74).  Fetch sessions (KIP-227) are kept for followers and consumers
(``replica/fetch_session.py``): an epoch-0 fetch opens one, and the later fetches name and are
answered only what changed.  As in Kafka's FetchManager, a request with session epoch 0 (open a
session) or -1 (FINAL_EPOCH: no session, as kafka-go's Client.Fetch sends it) is a full fetch
whatever its session id, which only names a session to close; any other epoch is an incremental
fetch on the session named: FETCH_SESSION_ID_NOT_FOUND when there is none,
INVALID_FETCH_SESSION_EPOCH when the epoch is not the one expected.  A session is its fetcher's:
a consumer's request cannot use a follower's, nor a follower another's.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import wire
from pykafkad.clock import now_ms
from pykafkad.handlers.access import Operation, ResourceType, allowed, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext, SentAlready
from pykafkad.handlers.leader_hints import FETCH_HINTED, LeaderHints
from pykafkad.observability import kafka_metrics as metrics
from pykafkad.observability.request_timing import count_partition_error
from pykafkad.replica.delayed_fetch import DelayedFetch, Template
from pykafkad.replica.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    FetchSession,
    SessionPartition,
    TopicKey,
    next_epoch,
)
from pykafkad.replica.replica_manager import QUIET, FetchedData, FetchEntry
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

INT32_MAX = 2**31 - 1
TOPIC_IDS_FROM = 13
REPLICA_STATE_FROM = 15
ZSTD_FROM = 10  # older fetchers get UNSUPPORTED_COMPRESSION_TYPE for zstd batches, as from Kafka
SESSIONS_FROM = 7
FETCH_KEY = 1
# Flexible versions, whose one-partition answer ends with its records and three empty tagged fields.
DELAYED_ANSWER_FROM = 12
_NO_RECORDS_END = b"\x01\x00\x00\x00"
# A consumer's answer ends its partition's fields with the high watermark and last stable offset,
# the log start offset, no aborted transactions (null, or an empty list reading committed) and no
# preferred read replica (-1).
_WATERMARKS = struct.Struct(">qq")
_NO_PREFERRED_REPLICA = b"\xff\xff\xff\xff"
_WATERMARKS_FROM_END = 16 + 8 + 1 + len(_NO_PREFERRED_REPLICA)


def _partition_entry(index: int, data: FetchedData) -> dict[str, Any]:
    entry = {"partition_index": index, "error_code": data.error, "high_watermark": data.high_watermark,
             "last_stable_offset": data.last_stable_offset, "log_start_offset": data.log_start_offset,
             "aborted_transactions": None if data.aborted_transactions is None else [
                 {"producer_id": pid, "first_offset": first} for pid, first in data.aborted_transactions],
             "preferred_read_replica": -1, "records": data.records}
    if data.diverging_epoch is not None:
        entry["diverging_epoch"] = {"epoch": data.diverging_epoch[0], "end_offset": data.diverging_epoch[1]}
    return entry


def _session_error(code: ErrorCode) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "session_id": 0, "responses": []}


def _topic_key(topic: dict[str, Any], by_id: bool) -> TopicKey:
    """How a request (or response) names a topic: by id from version 13 on, by name before."""
    return topic["topic_id"] if by_id else topic["topic"]


def _session_topics(session: FetchSession) -> list[dict[str, Any]]:
    """Every partition of ``session`` as the topics of a full request (read-only: kept in the session
    until a request names or forgets a partition)."""
    if session.request_topics is not None:
        return session.request_topics
    topics: dict[TopicKey, list[dict[str, Any]]] = {}
    parts = session.request_parts = {}
    for (key, index), p in session.partitions.items():
        part = parts[(key, index)] = {
            "partition": index, "fetch_offset": p.fetch_offset, "current_leader_epoch": p.current_leader_epoch,
            "last_fetched_epoch": p.last_fetched_epoch, "log_start_offset": p.log_start_offset,
            "partition_max_bytes": p.max_bytes}
        topics.setdefault(key, []).append(part)
    field = "topic_id" if session.by_id else "topic"
    session.request_topics = [{field: key, "partitions": parts} for key, parts in topics.items()]
    return session.request_topics


def _session_partitions(body: dict[str, Any], by_id: bool,
                        known: dict[tuple[TopicKey, int], SessionPartition]
                        ) -> dict[tuple[TopicKey, int], SessionPartition]:
    """A request's partitions as a session keeps them (what was told of each kept from ``known``)."""
    partitions = {}
    for wanted in body["topics"]:
        key = _topic_key(wanted, by_id)
        for part in wanted["partitions"]:
            before = known.get((key, part["partition"]))
            partitions[(key, part["partition"])] = SessionPartition(
                part["fetch_offset"], part["current_leader_epoch"], part.get("last_fetched_epoch", -1),
                part["partition_max_bytes"], part.get("log_start_offset", -1),
                sent=before.sent if before is not None else None)
    return partitions


def _update_session(session: FetchSession, body: dict[str, Any]) -> set[tuple[TopicKey, int]]:
    """An incremental request's partitions (changed or added) and forgotten ones, into its session;
    returns the partitions it named."""
    named = _session_partitions(body, session.by_id, session.partitions)
    kept = session.request_topics is not None and not body["forgotten_topics_data"] \
        and all(key in session.partitions for key in named)
    session.partitions.update(named)
    for forgotten in body["forgotten_topics_data"]:
        key = _topic_key(forgotten, session.by_id)
        for index in forgotten["partitions"]:
            session.partitions.pop((key, index), None)
    if kept:
        # Only positions moved: the kept request's entries take them.
        for key, p in named.items():
            session.request_parts[key].update(
                fetch_offset=p.fetch_offset, current_leader_epoch=p.current_leader_epoch,
                last_fetched_epoch=p.last_fetched_epoch, log_start_offset=p.log_start_offset,
                partition_max_bytes=p.max_bytes)
    elif named or body["forgotten_topics_data"]:
        session.request_topics = None
    return set(named)


def _news_only(session: FetchSession, responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's partitions with something the session's fetcher was not told yet; each kept
    one's watermarks recorded as told."""
    kept = []
    for entry in responses:
        news = []
        key = _topic_key(entry, session.by_id)
        for answer in entry["partitions"]:
            part = session.partitions.get((key, answer["partition_index"]))
            told = (answer["high_watermark"], answer["last_stable_offset"], answer["log_start_offset"])
            if (answer["records"] or answer["error_code"] != ErrorCode.NONE or "diverging_epoch" in answer
                    or part is None or part.sent != told):
                news.append(answer)
                if part is not None:
                    part.sent = told if answer["error_code"] == ErrorCode.NONE else None
        if news:
            kept.append({**entry, "partitions": news})
    return kept


def _one_partition_answer(ctx: RequestContext, session: FetchSession | None, by_id: bool,
                          names: list[tuple[TopicKey, int]], follower: bool, read_committed: bool = False
                          ) -> Callable[[int, FetchedData], Template | None]:
    """Entry ``i``'s answer alone, with ``data``'s watermarks, encoded around the place of its records
    (the last field of the frame, but for the empty tagged fields of the partition, the topic and the
    response), for the log to complete (``replica/delayed_fetch.py``).  A consumer's answer gets the
    high watermark it is answered at: where the head holds it, and the last stable offset after it,
    comes with the template (the partition's log start offset, no aborted transactions, an empty list
    of them reading committed, and no preferred read replica follow them)."""
    field = "topic_id" if by_id else "topic"
    after_log_start = (b"\x01" if read_committed else b"\x00") + _NO_PREFERRED_REPLICA
    session_id = session.session_id if session is not None else 0

    def template(i: int, data: FetchedData) -> Template | None:
        key, index = names[i]
        frame = wire.encode_response(FETCH_KEY, ctx.api_version, ctx.correlation_id, {
            "throttle_time_ms": 0, "error_code": ErrorCode.NONE, "session_id": session_id,
            "responses": [{field: key, "partitions": [_partition_entry(index, data)]}]})
        if not frame.endswith(_NO_RECORDS_END):
            return None
        head = bytes(frame[4:-len(_NO_RECORDS_END)])
        if follower:
            return head, _NO_RECORDS_END[1:], -1
        at = len(head) - _WATERMARKS_FROM_END
        if (head[at:at + 16] != _WATERMARKS.pack(data.high_watermark, data.last_stable_offset)
                or not head.endswith(after_log_start)):
            return None
        return head, _NO_RECORDS_END[1:], at

    return template


def _news_for(session: FetchSession | None, names: list[tuple[TopicKey, int]]
              ) -> Callable[[int, FetchedData], bool]:
    """Whether entry ``i``'s answer with ``data``'s watermarks tells the session's fetcher something it
    was not told (as ``_news_only`` keeps it); always, without a session (one partition)."""
    def news(i: int, data: FetchedData) -> bool:
        part = session.partitions.get(names[i]) if session is not None else None
        return part is None or part.sent != (data.high_watermark, data.last_stable_offset, data.log_start_offset)

    return news


def _sent_by_log(session: FetchSession | None, delayed: DelayedFetch, entries: list[FetchEntry],
                 names: list[tuple[TopicKey, int]], follower: bool) -> SentAlready:
    """A fetch that the log answered: counted, and its session records what it was told."""
    assert delayed.sent is not None
    i, records, unsent, high_watermark, last_stable_offset = delayed.sent
    metrics.FETCHES_ANSWERED_BY_LOG.labels("follower" if follower else "consumer").inc()
    if records:
        counter = metrics.REPLICATION_BYTES_OUT if follower else metrics.BYTES_OUT
        metrics.for_topic(counter, entries[i].topic).inc(records)
    if session is not None:
        told = delayed.told[i]
        part = session.partitions.get(names[i])
        if part is not None:
            part.sent = (told.high_watermark if high_watermark < 0 else high_watermark,
                         told.last_stable_offset if last_stable_offset < 0 else last_stable_offset,
                         told.log_start_offset)
        session.epoch = next_epoch(session.epoch)
    return SentAlready(unsent)


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | SentAlready:
    version = ctx.api_version
    by_id = version >= TOPIC_IDS_FROM
    # A broker's replica fetcher names itself (Kafka 4's consumers send -1).
    replica_id = body["replica_state"]["replica_id"] if version >= REPLICA_STATE_FROM else body["replica_id"]
    # Followers need CLUSTER_ACTION on the cluster, consumers READ on each topic.
    follower_denied = replica_id >= 0 and not cluster_allowed(broker, ctx, Operation.CLUSTER_ACTION)
    sessions = broker.replicas.fetch_sessions if not follower_denied else None
    session: FetchSession | None = None
    changed: set[tuple[TopicKey, int]] = set()
    opening = False
    if version >= SESSIONS_FROM:
        epoch, session_id = body["session_epoch"], body["session_id"]
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id and sessions is not None:
                sessions.close(session_id)
            opening = epoch == INITIAL_EPOCH and sessions is not None
        elif sessions is None:
            return _session_error(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        else:
            found = sessions.incremental(session_id, epoch, replica_id)
            if isinstance(found, ErrorCode):
                return _session_error(found)
            session = found
            changed = _update_session(session, body)
            body = {**body, "topics": _session_topics(session)}
    # A follower's incremental fetch records the positions of the partitions it names; those of the
    # rest of its session only now and then (their caught-up time), not on every fetch.
    all_positions = True
    if session is not None and replica_id >= 0:
        now = now_ms()
        all_positions = now >= session.positions_due_ms
        if all_positions:
            session.positions_due_ms = now + broker.replicas.position_refresh_ms
    # Per requested topic: its response entry and, per partition, (index, its answer or its entry's place).
    layout: list[tuple[dict[str, Any], list[tuple[int, FetchedData | int]]]] = []
    entries: list[FetchEntry] = []
    # How the response names each entry's partition: (topic key, partition).
    names: list[tuple[TopicKey, int]] = []
    unknown_topic = False
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
            told = None
            position_changed = True
            if session is not None and (key := (_topic_key(wanted, by_id), part["partition"])) not in changed:
                told = session.partitions[key].sent
                position_changed = all_positions
            names.append((_topic_key(wanted, by_id), part["partition"]))
            entries.append(FetchEntry(topic.name, part["partition"], part["fetch_offset"],
                                      part["current_leader_epoch"], part["partition_max_bytes"],
                                      part.get("last_fetched_epoch", -1), told, part.get("log_start_offset", -1),
                                      position_changed))
        entry: dict[str, Any] = {"topic_id": wanted["topic_id"]} if by_id else {"topic": wanted["topic"]}
        layout.append((entry, slots))
    # Where the log may answer a parked fetch itself: when one partition's answer is the whole answer.
    delayed = None
    if (ctx.socket_fd >= 0 and version >= DELAYED_ANSWER_FROM and body["min_bytes"] <= 1
            and not broker.client_quotas.enabled and not follower_denied):
        follower = replica_id >= 0
        # A consumer's full fetch answers every partition it names: one partition at most, then.
        alone = session is not None if follower else session is not None or (not opening and len(entries) == 1)
        if alone:
            read_committed = body["isolation_level"] == 1
            delayed = DelayedFetch(ctx.socket_fd, _one_partition_answer(ctx, session, by_id, names, follower,
                                                                        read_committed),
                                   _news_for(session, names), follower, read_committed)
    # A partition that errors answers at once, as Kafka does: no long-poll with an unknown topic.
    results = await broker.replicas.fetch_messages(
        entries, body["max_bytes"] if version >= 3 else INT32_MAX, body["min_bytes"],
        0 if unknown_topic else body["max_wait_ms"], allow_zstd=version >= ZSTD_FROM, replica_id=replica_id,
        read_committed=body["isolation_level"] == 1, zero_copy=ctx.zero_copy, delayed=delayed)
    if delayed is not None and delayed.sent is not None:
        return _sent_by_log(session, delayed, entries, names, replica_id >= 0)
    responses = []
    hints = LeaderHints(broker, FETCH_HINTED, ctx.listener)
    for (entry, slots), wanted in zip(layout, body["topics"], strict=True):
        entry["partitions"] = []
        topic = broker.metadata.topics_by_id.get(wanted["topic_id"]) if by_id else broker.topic(wanted["topic"])
        name = topic.name if topic is not None else wanted.get("topic") or str(wanted.get("topic_id"))
        for index, slot in slots:
            data = slot if isinstance(slot, FetchedData) else results[slot]
            if data is QUIET:
                continue
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
    answered_session = 0
    if session is not None:
        responses = _news_only(session, responses)
        session.epoch = next_epoch(session.epoch)
        answered_session = session.session_id
    elif opening and sessions is not None:
        session = sessions.open(replica_id, by_id, _session_partitions(body, by_id, {}))
        if session is not None:
            _news_only(session, responses)  # records what this full answer told
            answered_session = session.session_id
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "session_id": answered_session,
            "responses": responses, "node_endpoints": hints.node_endpoints()}


APIS = [Api(1, "Fetch", 4, 18, handle)]
