"""ShareFetch (78) and ShareAcknowledge (79): share consumers acquiring records and acknowledging
them (KIP-932), in Kafka 4.4's v1-2.  v2 adds the record_limit acquire mode (KIP-1206: never more
than MaxRecords, where batches are otherwise taken whole) and RENEW acknowledgements (KIP-1222: a
held record's lock starts again), allowed only in a request with IsRenewAck, which fetches nothing.

Served while the cluster's ``share.version`` is 1 or more.  The handlers make Kafka's checks in its
order (group id, GROUP READ, member id, the share session, then per partition), validate each
partition's acknowledgement batches as Kafka's ``validateAcknowledgementBatches`` does, apply the
acknowledgements before fetching, and leave the share-partitions' state to
``share/share_partition_manager.py``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from pykafkad.group_config import group_int
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.leader_hints import FETCH_HINTED, LeaderHints
from pykafkad.handlers.share_groups import MAX_MEMBER_ID_LENGTH, share_groups_enabled
from pykafkad.share.share_partition import MAX_ACKNOWLEDGE_TYPE, RELEASE, RENEW
from pykafkad.share.share_partition_manager import ShareFetched
from pykafkad.share.share_session import FINAL_EPOCH, INITIAL_EPOCH, ShareSession, next_epoch
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

# Kafka's broker fetch.max.bytes default, which bounds a ShareFetch's MaxBytes.
FETCH_MAX_BYTES = 57671680
RECORD_LIMIT = 1  # ShareAcquireMode (v2): 0 batch_optimized, 1 record_limit

Acks = dict[tuple[str, int], tuple[ErrorCode, str | None]]


def _top_error(code: ErrorCode, message: str | None = None, lock_ms: int = 0) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
            "acquisition_lock_timeout_ms": lock_ms, "responses": [], "node_endpoints": []}


def _refusal(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to a ShareFetch or ShareAcknowledge refused before its session is looked at, with
    Kafka's checks in Kafka's order; None when it may go on."""
    if not share_groups_enabled(broker):
        return _top_error(ErrorCode.UNSUPPORTED_VERSION)
    if body["group_id"] is None:
        return _top_error(ErrorCode.INVALID_REQUEST, "Invalid group id in the request.")
    if not allowed(broker, ctx, Operation.READ, ResourceType.GROUP, body["group_id"]):
        return _top_error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    member = body["member_id"]
    if not member or len(member) > MAX_MEMBER_ID_LENGTH:
        return _top_error(ErrorCode.INVALID_REQUEST, "Invalid member id in the request.")
    return None


def _bad_batches(batches: list[dict[str, Any]], renew: bool) -> bool:
    """Kafka's shape checks of one partition's acknowledgement batches (any one bad drops them all);
    RENEW is a type only in a request that says IsRenewAck."""
    top = RENEW if renew else MAX_ACKNOWLEDGE_TYPE
    previous_last = None
    for batch in batches:
        first, last, types = batch["first_offset"], batch["last_offset"], batch["acknowledge_types"]
        if first > last or (previous_last is not None and first < previous_last):
            return True
        if not types or (len(types) > 1 and last - first != len(types) - 1):
            return True
        if any(t < 0 or t > top for t in types):
            return True
        previous_last = last
    return False


async def _apply_acks(broker: Broker, ctx: RequestContext, group: str, member: str,
                      topics: list[dict[str, Any]], every: bool = False, renew: bool = False) -> Acks:
    """Each named partition's acknowledgements applied: its (error, message); ``every``: a partition
    named without batches too (NONE)."""
    results: Acks = {}
    shares = broker.share_partitions
    for wanted in topics:
        topic = broker.metadata.topics_by_id.get(wanted["topic_id"])
        for part in wanted["partitions"]:
            batches = part["acknowledgement_batches"] or []
            index = part["partition_index"]
            name = topic.name if topic is not None else str(wanted["topic_id"])
            if not batches:
                if every:
                    results[(name, index)] = (ErrorCode.NONE, None)
                continue
            if topic is None:
                results[(name, index)] = (ErrorCode.UNKNOWN_TOPIC_ID, None)
            elif not allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, topic.name):
                results[(name, index)] = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
            elif _bad_batches(batches, renew):
                results[(name, index)] = (ErrorCode.INVALID_REQUEST, None)
            else:
                results[(name, index)] = await shares.acknowledge(
                    group, member, topic.name, index,
                    [(b["first_offset"], b["last_offset"], list(b["acknowledge_types"])) for b in batches])
    return results


def _released(broker: Broker, topics: list[dict[str, Any]]) -> dict[tuple[str, int], tuple[tuple[int, int], ...]]:
    """The ranges each partition's acknowledgements release."""
    released: dict[tuple[str, int], tuple[tuple[int, int], ...]] = {}
    for wanted in topics:
        topic = broker.metadata.topics_by_id.get(wanted["topic_id"])
        for part in wanted["partitions"] if topic is not None else []:
            ranges = []
            for b in part["acknowledgement_batches"] or []:
                types, first = b["acknowledge_types"], b["first_offset"]
                if len(types) == 1:
                    ranges += [(first, b["last_offset"])] if types[0] == RELEASE else []
                else:
                    ranges += [(first + i, first + i) for i, t in enumerate(types) if t == RELEASE]
            if ranges:
                released[(topic.name, part["partition_index"])] = tuple(ranges)
    return released


def _has_acks(topics: list[dict[str, Any]]) -> bool:
    return any(part["acknowledgement_batches"] for t in topics for part in t["partitions"])


def _session_for(broker: Broker, ctx: RequestContext, group: str, member: str,
                 epoch: int) -> ShareSession | ErrorCode:
    sessions = broker.share_partitions.sessions
    if epoch == INITIAL_EPOCH:
        return sessions.open(group, member, ctx.connection_id)
    return sessions.check(group, member, epoch)


def _topic_ids(broker: Broker) -> dict[str, uuid.UUID]:
    return {name: info.topic_id for name, info in broker.metadata.topics.items()}


def _response(broker: Broker, ctx: RequestContext, keys: list[tuple[str, int]],
              fetched: dict[tuple[str, int], ShareFetched], acks: Acks, lock_ms: int, full: bool,
              ack_api: bool = False) -> dict[str, Any]:
    """The response naming ``keys`` (every one when ``full``, else only those with records, an error
    or acknowledgement results), grouped by topic in their order."""
    ids = _topic_ids(broker)
    hints = LeaderHints(broker, FETCH_HINTED, ctx.listener)
    by_topic: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for key in keys + [k for k in acks if k not in keys]:
        topic, index = key
        found = fetched.get(key, ShareFetched())
        ack_code, ack_message = acks.get(key, (ErrorCode.NONE, None))
        if not full and not found.acquired and found.error == ErrorCode.NONE and key not in acks:
            continue
        topic_id = ids.get(topic)
        if topic_id is None:
            try:
                topic_id = uuid.UUID(topic)
            except ValueError:
                continue
        error = ack_code if ack_api else found.error
        leader = hints.current_leader(topic, index, error) or {"leader_id": -1, "leader_epoch": -1}
        if ack_api:
            entry = {"partition_index": index, "error_code": ack_code, "error_message": ack_message,
                     "current_leader": leader}
        else:
            entry = {"partition_index": index, "error_code": found.error, "error_message": found.message,
                     "acknowledge_error_code": ack_code, "acknowledge_error_message": ack_message,
                     "current_leader": leader, "records": found.records,
                     "acquired_records": [{"first_offset": f, "last_offset": last, "delivery_count": c}
                                          for f, last, c in found.acquired]}
        by_topic.setdefault(topic_id, []).append(entry)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "acquisition_lock_timeout_ms": lock_ms,
            "responses": [{"topic_id": t, "partitions": parts} for t, parts in by_topic.items()],
            "node_endpoints": hints.node_endpoints()}


def _lock_ms(broker: Broker, group: str) -> int:
    return group_int(broker.config, broker.metadata.group_configs.get(group, {}), "share.record.lock.duration.ms")


def _renewal_refused(body: dict[str, Any]) -> bool:
    """A ShareFetch with IsRenewAck only acknowledges (KIP-1222): it must ask for no records and name
    no partition without acknowledgements."""
    if any(body[k] for k in ("max_bytes", "min_bytes", "max_records", "max_wait_ms")):
        return True
    return any(not part["acknowledgement_batches"] for t in body["topics"] for part in t["partitions"])


async def share_fetch(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if (refused := _refusal(broker, ctx, body)) is not None:
        return refused
    renew = body.get("is_renew_ack", False)
    if renew and _renewal_refused(body):
        return _top_error(ErrorCode.INVALID_REQUEST, "Renew acknowledgements must not ask for records.")
    group, member, epoch = body["group_id"], body["member_id"], body["share_session_epoch"]
    if epoch == INITIAL_EPOCH and _has_acks(body["topics"]):
        return _top_error(ErrorCode.INVALID_REQUEST, "Acknowledge data present in Initial Fetch Request")
    session = _session_for(broker, ctx, group, member, epoch)
    if isinstance(session, ErrorCode):
        return _top_error(session)
    if epoch > INITIAL_EPOCH:
        # Moved on at once, as Kafka's newContext does: a repeat of this epoch while this request is
        # still answered is refused.
        session.epoch = next_epoch(session.epoch)
    lock_ms = _lock_ms(broker, group)
    acks = await _apply_acks(broker, ctx, group, member, body["topics"], renew=renew)
    if epoch == FINAL_EPOCH:
        broker.share_partitions.close_session(session)
        return _response(broker, ctx, [], {}, acks, lock_ms, full=False)
    if renew:
        # Fetching could outlast the locks just renewed: a renewal only acknowledges.
        return _response(broker, ctx, [], {}, acks, lock_ms, full=False)
    # The session's partitions: those named are added, the forgotten dropped.
    errors: dict[tuple[str, int], ShareFetched] = {}
    for wanted in body["topics"]:
        topic = broker.metadata.topics_by_id.get(wanted["topic_id"])
        for part in wanted["partitions"]:
            index = part["partition_index"]
            if topic is None:
                errors[(str(wanted["topic_id"]), index)] = ShareFetched(ErrorCode.UNKNOWN_TOPIC_ID)
            elif not allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, topic.name):
                errors[(topic.name, index)] = ShareFetched(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            else:
                session.partitions.setdefault((topic.name, index), wanted["topic_id"])
    for forgotten in body["forgotten_topics_data"]:
        topic = broker.metadata.topics_by_id.get(forgotten["topic_id"])
        for index in forgotten["partitions"] if topic is not None else []:
            session.partitions.pop((topic.name, index), None)
    wanted_keys = list(session.partitions)
    max_records = body["max_records"]
    max_bytes = min(body["max_bytes"], FETCH_MAX_BYTES)
    fetched: dict[tuple[str, int], ShareFetched] = {}
    if max_records > 0 and max_bytes > 0 and wanted_keys:
        fetched = await broker.share_partitions.fetch(
            group, member, wanted_keys, max_records, max_bytes,
            0 if errors else body["max_wait_ms"], _released(broker, body["topics"]),
            record_limit=body.get("share_acquire_mode", 0) == RECORD_LIMIT)
    fetched.update(errors)
    keys = wanted_keys + [k for k in errors if k not in session.partitions]
    return _response(broker, ctx, keys, fetched, acks, lock_ms, full=epoch == INITIAL_EPOCH)


async def share_acknowledge(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if (refused := _refusal(broker, ctx, body)) is not None:
        return refused
    group, member, epoch = body["group_id"], body["member_id"], body["share_session_epoch"]
    if epoch == INITIAL_EPOCH:
        return _top_error(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
    session = broker.share_partitions.sessions.check(group, member, epoch)
    if isinstance(session, ErrorCode):
        return _top_error(session)
    if epoch != FINAL_EPOCH:
        session.epoch = next_epoch(session.epoch)
    lock_ms = _lock_ms(broker, group)
    acks = await _apply_acks(broker, ctx, group, member, body["topics"], every=True,
                             renew=body.get("is_renew_ack", False))
    if epoch == FINAL_EPOCH:
        broker.share_partitions.close_session(session)
    named = [(t, i) for t, i in acks]
    return _response(broker, ctx, named, {}, acks, lock_ms, full=True, ack_api=True)


APIS = [
    Api(78, "ShareFetch", 1, 2, share_fetch),
    Api(79, "ShareAcknowledge", 1, 2, share_acknowledge),
]
