"""FindCoordinator (key 10): a group's coordinator is the leader of its ``__consumer_offsets``
partition, a transactional id's the leader of its ``__transaction_state`` partition.

v0-3 ask for one key, v4+ for a batch (``coordinator_keys``).  Each internal topic is
created on first use, as Kafka does.  v6 adds share-partition keys (KIP-932): the leader of
the key's partition of ``__share_group_state`` while share groups are on (``share.version`` 1 or
more), else COORDINATOR_NOT_AVAILABLE, as Kafka answers.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import trio

from pykafkad.coordinator.group.offsets_store import OFFSETS_TOPIC
from pykafkad.coordinator.share.coordinator import partition_for
from pykafkad.coordinator.share.share_state_records import SHARE_STATE_TOPIC
from pykafkad.coordinator.transaction.transaction_log import TRANSACTION_TOPIC
from pykafkad.errors import KafkaError
from pykafkad.handlers.access import Operation, ResourceType, allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.share_groups import share_groups_enabled
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

log = logging.getLogger(__name__)

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
# KIP-932: a share-partition's key, ``<group>:<topic id>:<partition>``, from v6.
SHARE_KEY_TYPE = 2
SHARE_KEYS_FROM = 6
# How long a FindCoordinator waits for an internal topic another request is creating.
CREATION_WAIT_S = 5.0


def _share_key_valid(key: str) -> bool:
    """Whether ``key`` is ``<group>:<topic id, base64url>:<partition>``, as Kafka checks it."""
    parts = key.rsplit(":", 2)
    if len(parts) != 3 or not parts[0]:
        return False
    _, topic_id, partition = parts
    try:
        decoded = base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
        return len(decoded) == 16 and int(partition) >= 0
    except ValueError:
        return False


async def _lookup(broker: Broker, ctx: RequestContext, key: str, key_type: int) -> dict[str, Any]:
    listener = ctx.listener
    if key_type == SHARE_KEY_TYPE:
        if ctx.api_version < SHARE_KEYS_FROM or not _share_key_valid(key):
            return _error(key, ErrorCode.INVALID_REQUEST, "")
        if not share_groups_enabled(broker):
            # Kafka answers a share key so while its share groups are off.
            return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "")
        if not await _internal_topic(broker, SHARE_STATE_TOPIC, broker.share_coordinator.create_topic):
            return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        index = partition_for(key, len(broker.metadata.topics[SHARE_STATE_TOPIC].partitions))
        return _leader_of(broker, key, SHARE_STATE_TOPIC, index, listener)
    if key_type == GROUP_KEY_TYPE and not allowed(broker, ctx, Operation.DESCRIBE, ResourceType.GROUP, key):
        return _error(key, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    if key_type == TRANSACTION_KEY_TYPE and not allowed(broker, ctx, Operation.DESCRIBE,
                                                         ResourceType.TRANSACTIONAL_ID, key):
        return _error(key, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None)
    if key_type == GROUP_KEY_TYPE:
        try:
            ready = await _internal_topic(broker, OFFSETS_TOPIC, broker.groups.create_offsets_topic)
        except Exception:  # noqa: BLE001 - cannot host the offsets topic: no coordinator to offer
            log.exception("creating the offsets topic failed")
            ready = False
        if not ready:
            return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        return _leader_of(broker, key, OFFSETS_TOPIC, broker.groups.partition_for(key), listener)
    if key_type == TRANSACTION_KEY_TYPE:
        if not await _internal_topic(broker, TRANSACTION_TOPIC, broker.transactions.create_topic):
            return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
        return _leader_of(broker, key, TRANSACTION_TOPIC, broker.transactions.partition_for(key), listener)
    return _error(key, ErrorCode.INVALID_REQUEST, f"Unsupported key type {key_type}.")


async def _internal_topic(broker: Broker, topic: str, create: Callable[[], Awaitable[None]]) -> bool:
    """Whether ``topic`` exists, made on this first use if not, as Kafka's FindCoordinator makes it.

    A creation under way for another request, here or on another broker, is waited for a moment
    rather than answered at once with a retriable error.  False (the client retries) while it
    cannot be made, for instance with fewer brokers up than its replication factor.
    """
    try:
        await create()
        return True
    except KafkaError as e:
        if e.code != ErrorCode.TOPIC_ALREADY_EXISTS:
            log.info("cannot create %s yet: %s; clients are told the coordinator is not available", topic, e)
            return False
    with trio.move_on_after(CREATION_WAIT_S):
        await broker.metadata.wait_for(lambda: topic in broker.metadata.topics)
    return topic in broker.metadata.topics


def _leader_of(broker: Broker, key: str, topic_name: str, index: int, listener: str) -> dict[str, Any]:
    """The coordinator of ``key``: the leader of its partition of the internal topic."""
    topic = broker.metadata.topics.get(topic_name)
    leader = topic.partitions[index].leader if topic is not None and index < len(topic.partitions) else -1
    coordinator = broker.metadata.brokers.get(leader)
    endpoint = coordinator.endpoint(listener) if coordinator is not None else None
    if coordinator is None or endpoint is None:
        # No leader elected yet, or its broker is down: retriable.
        return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.")
    return {"key": key, "node_id": coordinator.node_id, "host": endpoint[0], "port": endpoint[1],
            "error_code": ErrorCode.NONE, "error_message": None}


def _error(key: str, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": code, "error_message": message}


async def handle(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    key_type = body["key_type"] if ctx.api_version >= 1 else GROUP_KEY_TYPE
    if ctx.api_version >= 4:
        keys = body["coordinator_keys"]
        return {"throttle_time_ms": 0, "coordinators": [await _lookup(broker, ctx, key, key_type)
                                                        for key in keys]}
    found = await _lookup(broker, ctx, body["key"], key_type)
    return {"throttle_time_ms": 0, "error_code": found["error_code"], "error_message": found["error_message"],
            "node_id": found["node_id"], "host": found["host"], "port": found["port"]}


APIS = [Api(10, "FindCoordinator", 0, 6, handle)]
