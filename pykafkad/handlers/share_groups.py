"""ShareGroupHeartbeat (76) and ShareGroupDescribe (77): the membership of share groups (KIP-932).

Served while the cluster's ``share.version`` is 1 or more, as Kafka 4.4 gates them (both stay
advertised, and answer UNSUPPORTED_VERSION below it).  The handler makes Kafka's request checks in
Kafka's order and words; the group's actor (``coordinator/group/share_group.py``) does the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.requests import DescribeShareGroup, ShareHeartbeat, consumer_heartbeat_error
from pykafkad.coordinator.group.share_group import JOIN_EPOCH, LEAVE_EPOCH, ShareHeartbeatFields
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.consumer_groups import describe_groups
from pykafkad.handlers.groups import client_host
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

SHARE_VERSION = "share.version"
# Kafka's bound on a member id a client makes up (a UUID's string is 36 characters at most).
MAX_MEMBER_ID_LENGTH = 36
SHARE_HEARTBEAT_INTERVAL_MS = "share.heartbeat.interval.ms"


def share_groups_enabled(broker: Broker) -> bool:
    return broker.metadata.features.level(SHARE_VERSION) >= 1


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REQUEST, message)


def _check(body: dict[str, Any]) -> None:
    """Kafka's checks of a ShareGroupHeartbeat that need no group state, in its order."""
    if not body["group_id"]:
        raise _invalid("GroupId can't be empty.")
    if body["rack_id"] == "":
        raise _invalid("RackId can't be empty.")
    epoch = body["member_epoch"]
    if epoch == JOIN_EPOCH and not body["subscribed_topic_names"]:
        raise _invalid("SubscribedTopicNames must be set in first request.")
    if epoch < LEAVE_EPOCH:
        raise _invalid("MemberEpoch is invalid.")


async def share_group_heartbeat(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    def error(code: ErrorCode, message: str | None = None) -> dict[str, Any]:
        return {"throttle_time_ms": 0, **consumer_heartbeat_error(code, message)}

    if not share_groups_enabled(broker):
        return error(ErrorCode.UNSUPPORTED_VERSION)
    group_id = body["group_id"]
    if not allowed(broker, ctx, Operation.READ, ResourceType.GROUP, group_id):
        return error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    member_id = body["member_id"]
    if not member_id or len(member_id) > MAX_MEMBER_ID_LENGTH:
        return error(ErrorCode.INVALID_REQUEST)  # (Kafka says no more)
    if any(not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.TOPIC, t)
           for t in body["subscribed_topic_names"] or []):
        return error(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    try:
        _check(body)
    except KafkaError as e:
        return error(e.code, e.message)
    fields = ShareHeartbeatFields(member_id=member_id, member_epoch=body["member_epoch"], rack_id=body["rack_id"],
                                  subscribed_topic_names=body["subscribed_topic_names"],
                                  client_id=ctx.client_id or "", client_host=client_host(ctx))
    interval = broker.metadata.group_configs.get(group_id, {}).get(SHARE_HEARTBEAT_INTERVAL_MS)
    result = await broker.groups.call(group_id, ShareHeartbeat(fields, int(interval) if interval else None))
    return {"throttle_time_ms": 0, **result}


async def share_group_describe(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    return await describe_groups(broker, ctx, body, DescribeShareGroup(), share_groups_enabled(broker))

APIS = [
    Api(76, "ShareGroupHeartbeat", 1, 1, share_group_heartbeat),
    Api(77, "ShareGroupDescribe", 1, 1, share_group_describe),
]
