"""DescribeShareGroupOffsets (90): where each share-partition of a share group starts and how far it
lags (KIP-932, Kafka 4.4's v1 with Lag), answered by the group's coordinator as in Kafka: the
partitions named, or with no topics every partition the group has share state for; each from
``share/share_group_offsets.py``.  DESCRIBE on the group and on each topic is needed.
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


APIS = [Api(90, "DescribeShareGroupOffsets", 0, 1, describe_share_group_offsets)]
