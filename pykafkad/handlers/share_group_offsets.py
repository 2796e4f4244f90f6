"""A share group's offsets (KIP-932), answered by the group's coordinator as in Kafka, from
``share/share_group_offsets.py``:

- DescribeShareGroupOffsets (90, v1 with Lag): where each share-partition starts and how far it
  lags; the partitions named, or with no topics every partition the group has share state for.
  DESCRIBE on the group and on each topic is needed.
- AlterShareGroupOffsets (91): an empty share group's share-partitions start again at the given
  offsets; a group that does not exist is made, empty, as in Kafka 4.4.  READ on the group and on
  each topic.
- DeleteShareGroupOffsets (92): an empty share group's share state for whole topics is deleted.
  DELETE on the group, READ on each topic.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.requests import ShareGroupPartitions
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.share_groups import share_groups_enabled
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

NO_TOPIC_ID = uuid.UUID(int=0)


def _partition(index: int, code: ErrorCode, message: str | None = None, start: int = -1, epoch: int = -1,
               lag: int = -1) -> dict[str, Any]:
    return {"partition_index": index, "start_offset": start, "leader_epoch": epoch, "lag": lag, "error_code": code,
            "error_message": message}


def _group_error(group_id: str, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"group_id": group_id, "topics": [], "error_code": code, "error_message": message}


async def _describe_group(broker: Broker, ctx: RequestContext, wanted: dict[str, Any]) -> dict[str, Any]:
    group_id = wanted["group_id"]
    if not share_groups_enabled(broker):
        return _group_error(group_id, ErrorCode.UNSUPPORTED_VERSION)
    if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.GROUP, group_id):
        return _group_error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    known = await broker.groups.call(group_id, ShareGroupPartitions())
    if known["error_code"] != ErrorCode.NONE:
        return _group_error(group_id, known["error_code"], known["error_message"])
    if wanted["topics"] is None:
        names = {info.topic_id: name for name, info in broker.metadata.topics.items()}
        topics = [(names[t], ps) for t, ps in known["initialized"].items() if t in names]
    else:
        topics = [(t["topic_name"], list(t["partitions"])) for t in wanted["topics"]]
    answer = []
    for name, partitions in sorted(topics):
        info = broker.metadata.topics.get(name)
        entry: dict[str, Any] = {"topic_name": name, "topic_id": info.topic_id if info else NO_TOPIC_ID,
                                 "partitions": []}
        denied = not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, name)
        for index in partitions:
            if denied:
                entry["partitions"].append(_partition(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            found = await broker.share_group_offsets.describe(group_id, name, index)
            entry["partitions"].append(_partition(index, found.error, found.message, found.start_offset,
                                                  found.leader_epoch, found.lag))
        answer.append(entry)
    return {"group_id": group_id, "topics": answer, "error_code": ErrorCode.NONE, "error_message": None}


async def describe_share_group_offsets(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "groups": [await _describe_group(broker, ctx, g) for g in body["groups"]]}


def _alter_partition(index: int, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"partition_index": index, "error_code": code, "error_message": message}


def _alter_error(code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "responses": []}


def _refusal(broker: Broker, ctx: RequestContext, group_id: str, operation: Operation) -> dict[str, Any] | None:
    """Kafka's checks of an alter or delete before the group is looked at, in its order."""
    if not share_groups_enabled(broker):
        return _alter_error(ErrorCode.UNSUPPORTED_VERSION)
    if not allowed(broker, ctx, operation, ResourceType.GROUP, group_id):
        return _alter_error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if not group_id:
        return _alter_error(ErrorCode.INVALID_GROUP_ID)
    return None


async def alter_share_group_offsets(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    group_id = body["group_id"]
    if (refused := _refusal(broker, ctx, group_id, Operation.READ)) is not None:
        return refused
    offsets = broker.share_group_offsets
    responses: list[dict[str, Any]] = []
    wanted = []
    for topic in body["topics"]:
        name = topic["topic_name"]
        info = broker.metadata.topics.get(name)
        code = (ErrorCode.TOPIC_AUTHORIZATION_FAILED
                if not allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, name)
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if info is None else None)
        if code is not None:
            responses.append({"topic_name": name, "topic_id": info.topic_id if info is not None else NO_TOPIC_ID,
                              "partitions": [_alter_partition(p["partition_index"], code)
                                             for p in topic["partitions"]]})
        else:
            wanted.append((name, info, topic["partitions"]))
    # The group is checked even when no topic is left, as Kafka's coordinator is always asked; it is
    # made only when there is something to write.
    group = await offsets.empty_group(group_id, create=bool(wanted))
    if not wanted and group.no_group:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "responses": responses}
    if group.error != ErrorCode.NONE:
        return _alter_error(group.error, group.message)
    initialized: dict[uuid.UUID, list[int]] = {}
    for name, info, partitions in wanted:
        entry: dict[str, Any] = {"topic_name": name, "topic_id": info.topic_id, "partitions": []}
        for p in partitions:
            index = p["partition_index"]
            if not 0 <= index < len(info.partitions):
                entry["partitions"].append(_alter_partition(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            code, message = await offsets.alter(group_id, info.topic_id, index, p["start_offset"],
                                                group.group_epoch)
            if code == ErrorCode.NONE:
                initialized.setdefault(info.topic_id, []).append(index)
            entry["partitions"].append(_alter_partition(index, code, message))
        responses.append(entry)
    code, message = await offsets.changed(group_id, initialized=initialized)
    if code != ErrorCode.NONE:
        return _alter_error(code, message)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "responses": responses}


def _delete_topic(name: str, topic_id: uuid.UUID, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"topic_name": name, "topic_id": topic_id, "error_code": code, "error_message": message}


async def delete_share_group_offsets(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    group_id = body["group_id"]
    if (refused := _refusal(broker, ctx, group_id, Operation.DELETE)) is not None:
        return refused
    offsets = broker.share_group_offsets
    responses: list[dict[str, Any]] = []
    names = []
    for topic in body["topics"]:
        name = topic["topic_name"]
        if allowed(broker, ctx, Operation.READ, ResourceType.TOPIC, name):
            names.append(name)
        else:
            responses.append(_delete_topic(name, NO_TOPIC_ID, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
    group = await offsets.empty_group(group_id)
    if group.error != ErrorCode.NONE:
        return _alter_error(group.error, group.message)
    deleting: dict[uuid.UUID, list[int]] = {}
    for name in names:
        info = broker.metadata.topics.get(name)
        if info is None:
            responses.append(_delete_topic(name, NO_TOPIC_ID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        elif info.topic_id not in group.initialized:
            responses.append(_delete_topic(name, NO_TOPIC_ID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                           "There is no offset information to delete."))
        else:
            deleting[info.topic_id] = group.initialized[info.topic_id]
    errors = await offsets.delete_states(group_id, deleting)
    done = {t: deleting[t] for t, (code, _) in errors.items() if code == ErrorCode.NONE}
    if done:
        code, message = await offsets.changed(group_id, deleted=done)
        if code != ErrorCode.NONE:
            return _alter_error(code, message)
    names_of = {info.topic_id: name for name, info in broker.metadata.topics.items()}
    for topic_id, (code, message) in errors.items():
        responses.append(_delete_topic(names_of.get(topic_id, ""), topic_id, code, message))
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "responses": responses}


APIS = [
    Api(90, "DescribeShareGroupOffsets", 0, 1, describe_share_group_offsets),
    Api(91, "AlterShareGroupOffsets", 0, 0, alter_share_group_offsets),
    Api(92, "DeleteShareGroupOffsets", 0, 0, delete_share_group_offsets),
]
