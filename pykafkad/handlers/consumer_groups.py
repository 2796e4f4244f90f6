"""The consumer group protocol of KIP-848: ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

A heartbeat is checked here for what needs no group state, with Kafka's INVALID_REQUEST messages,
and handed to the group's actor, which owns membership, epochs and assignment
(``pykafkad.coordinator.group.consumer_group``).  Both APIs are served while
``group.coordinator.rebalance.protocols`` includes ``consumer`` (Kafka 4's default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.group.consumer_group import HeartbeatFields
from pykafkad.coordinator.group.consumer_member import JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH, new_member_id
from pykafkad.coordinator.group.requests import (
    ConsumerHeartbeat,
    DescribeConsumerGroup,
    GroupRequest,
    consumer_heartbeat_error,
)
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed, operations
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.groups import client_host
from pykafkad.metadata.features import GROUP_VERSION
from pykafkad.regular_expression import whole_name_matcher
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

# From v1 the client makes up its member id; v0 members get one from the coordinator.
CLIENT_MEMBER_ID_FROM = 1


def consumer_protocol_enabled(broker: Broker) -> bool:
    """Whether KIP-848's consumer groups are served: Kafka 4.4 needs both the broker's
    group.coordinator.rebalance.protocols and the cluster's group.version (level 1)."""
    return ("consumer" in broker.config["group.coordinator.rebalance.protocols"]
            and broker.metadata.features.level(GROUP_VERSION) >= 1)


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REQUEST, message)


def _check(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> None:
    """Kafka's checks of a heartbeat before the group is looked at, in its order and words."""
    if not body["group_id"]:
        raise _invalid("GroupId can't be empty.")
    if body["instance_id"] == "":
        raise _invalid("InstanceId can't be empty.")
    if body["rack_id"] == "":
        raise _invalid("RackId can't be empty.")
    epoch = body["member_epoch"]
    if epoch > 0 or epoch == LEAVE_EPOCH or (epoch == JOIN_EPOCH and ctx.api_version >= CLIENT_MEMBER_ID_FROM):
        if not body["member_id"]:
            raise _invalid("MemberId can't be empty.")
    if epoch == JOIN_EPOCH:
        if body["rebalance_timeout_ms"] == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        if body["topic_partitions"] is None or body["topic_partitions"]:
            raise _invalid("TopicPartitions must be empty when (re-)joining.")
        if body["subscribed_topic_names"] is None and body.get("subscribed_topic_regex") is None:
            raise _invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    elif epoch == STATIC_LEAVE_EPOCH:
        if not body["member_id"]:
            raise _invalid("MemberId can't be empty.")
        if body["instance_id"] is None:
            raise _invalid("InstanceId can't be null.")
    elif epoch < 0 and epoch != LEAVE_EPOCH:
        raise _invalid("MemberEpoch is invalid.")
    assignors = broker.groups.config.consumer.assignors
    if body["server_assignor"] is not None and body["server_assignor"] not in assignors:
        raise KafkaError(ErrorCode.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {body['server_assignor']} is not supported. "
                                                         f"Supported assignors: {', '.join(assignors)}.")
    regex = body.get("subscribed_topic_regex")
    if regex:
        try:
            whole_name_matcher(regex)
        except KafkaError as e:
            reason = (e.message or "").split(": ", 1)[-1]
            raise KafkaError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                             f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {reason}.") from None


async def consumer_group_heartbeat(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if not consumer_protocol_enabled(broker):
        return {"throttle_time_ms": 0, **consumer_heartbeat_error(ErrorCode.UNSUPPORTED_VERSION)}
    group_id = body["group_id"]
    if group_id and not allowed(broker, ctx, Operation.READ, ResourceType.GROUP, group_id):
        return {"throttle_time_ms": 0, **consumer_heartbeat_error(ErrorCode.GROUP_AUTHORIZATION_FAILED)}
    try:
        _check(broker, ctx, body)
    except KafkaError as e:
        return {"throttle_time_ms": 0, **consumer_heartbeat_error(e.code, e.message)}
    member_id = body["member_id"] or new_member_id()
    fields = HeartbeatFields(
        member_id=member_id, member_epoch=body["member_epoch"], instance_id=body["instance_id"],
        rack_id=body["rack_id"], rebalance_timeout_ms=body["rebalance_timeout_ms"],
        subscribed_topic_names=body["subscribed_topic_names"],
        subscribed_topic_regex=body.get("subscribed_topic_regex"), server_assignor=body["server_assignor"],
        topic_partitions=body["topic_partitions"], client_id=ctx.client_id or "", client_host=client_host(ctx))
    return {"throttle_time_ms": 0, **await broker.groups.call(group_id, ConsumerHeartbeat(fields))}


async def describe_groups(broker: Broker, ctx: RequestContext, body: dict[str, Any], ask: GroupRequest,
                          enabled: bool) -> dict[str, Any]:
    """ConsumerGroupDescribe and ShareGroupDescribe: each group as ``ask`` describes it, with Kafka's
    per-group errors (UNSUPPORTED_VERSION while the protocol is off, INVALID_GROUP_ID, no DESCRIBE)."""
    groups = []
    for group_id in body["group_ids"]:
        empty = ask.error_reply(group_id, ErrorCode.NONE)
        if not enabled:
            groups.append({**empty, "error_code": ErrorCode.UNSUPPORTED_VERSION})
            continue
        if not group_id:
            groups.append({**empty, "error_code": ErrorCode.INVALID_GROUP_ID})
            continue
        if not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.GROUP, group_id):
            groups.append({**empty, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED})
            continue
        described = await broker.groups.call(group_id, ask)
        groups.append({**described, "authorized_operations": operations(
            broker, ctx, ResourceType.GROUP, group_id, body["include_authorized_operations"])})
    return {"throttle_time_ms": 0, "groups": groups}


async def consumer_group_describe(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    return await describe_groups(broker, ctx, body, DescribeConsumerGroup(), consumer_protocol_enabled(broker))

APIS = [
    Api(68, "ConsumerGroupHeartbeat", 0, 1, consumer_group_heartbeat),
    Api(69, "ConsumerGroupDescribe", 0, 1, consumer_group_describe),
]
