"""The partition leader's door to the share coordinator (Kafka's DefaultStatePersister): it
initializes, reads, writes and deletes a share-partition's state on whichever broker leads the state's
partition of ``__share_group_state``, in process when that is this broker, else with
InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState and
DeleteShareGroupState over an inter-broker link.

A coordinator that is moving or loading (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
COORDINATOR_NOT_AVAILABLE, an unreachable broker) is asked again, with a short backoff, for up to
``RETRY_S``; what then still fails is the caller's error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from pykafkad.coordinator.share.coordinator import Outcome, ShareCoordinator
from pykafkad.coordinator.share.share_state_records import SHARE_STATE_TOPIC, ShareKey, ShareState, StateBatch
from pykafkad.errors import KafkaError
from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLinkError, BrokerLinkPool
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.metadata.cluster_metadata import ClusterMetadata

log = logging.getLogger(__name__)

INITIALIZE, READ, WRITE, DELETE, READ_SUMMARY = 83, 84, 85, 86, 87
RETRY_S = 10.0
BACKOFF_S = 0.05
REQUEST_TIMEOUT_S = 10.0
RETRIABLE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                       ErrorCode.COORDINATOR_NOT_AVAILABLE})
T = TypeVar("T")


def _batches(batches: list[StateBatch] | tuple[StateBatch, ...]) -> list[dict[str, int]]:
    return [{"first_offset": b.first_offset, "last_offset": b.last_offset, "delivery_state": b.delivery_state,
             "delivery_count": b.delivery_count} for b in batches]


def _partition_result(answer: dict[str, Any]) -> dict[str, Any]:
    return answer["results"][0]["partitions"][0]


class SharePersister:
    """Share-partition state, wherever its coordinator is."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, coordinator: ShareCoordinator) -> None:
        self.config = config
        self.metadata = metadata
        self.coordinator = coordinator
        self._links = BrokerLinkPool(f"share-persister-{config.node_id}", ssl_context=inter_broker_context(config),
                                     sasl=inter_broker_sasl(config))

    def _coordinator_of(self, key: ShareKey) -> int:
        topic = self.metadata.topics.get(SHARE_STATE_TOPIC)
        index = self.coordinator.partition_for(key)
        return topic.partitions[index].leader if topic is not None and index < len(topic.partitions) else -1

    async def _ask(self, key: ShareKey, local: Callable[[], Awaitable[T]], api_key: int, version: int,
                   partition: dict[str, Any], answer: Callable[[dict[str, Any]], T]) -> T | Outcome:
        """``local()`` when this broker coordinates ``key``, else the request to its coordinator;
        retried while the coordinator moves or loads."""
        deadline = trio.current_time() + RETRY_S
        while True:
            try:
                await self.coordinator.create_topic()
            except KafkaError as e:
                result: T | Outcome = (ErrorCode(e.code), e.message)
            else:
                leader = self._coordinator_of(key)
                if leader == self.config.node_id:
                    result = await local()
                else:
                    result = await self._remote(key, leader, api_key, version, partition, answer)
            retry = isinstance(result, tuple) and result[0] in RETRIABLE
            if not retry or trio.current_time() >= deadline:
                return result
            await trio.sleep(BACKOFF_S)

    async def _remote(self, key: ShareKey, leader: int, api_key: int, version: int, partition: dict[str, Any],
                      answer: Callable[[dict[str, Any]], T]) -> T | Outcome:
        broker = self.metadata.brokers.get(leader)
        if broker is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        body = {"group_id": key[0], "topics": [{"topic_id": key[1], "partitions": [{"partition": key[2],
                                                                                       **partition}]}]}
        try:
            response = await self._links.request(broker.host, broker.port, api_key, version, body,
                                                 REQUEST_TIMEOUT_S)
        except BrokerLinkError as e:
            log.info("share state of %s at broker %d: %s", key, leader, e)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        result = _partition_result(response)
        if result["error_code"] != ErrorCode.NONE:
            return ErrorCode(result["error_code"]), result["error_message"]
        return answer(result)

    async def initialize(self, key: ShareKey, state_epoch: int, start_offset: int) -> Outcome:
        return await self._ask(key, lambda: self.coordinator.initialize(key, state_epoch, start_offset),
                               INITIALIZE, 0, {"state_epoch": state_epoch, "start_offset": start_offset},
                               lambda _: (ErrorCode.NONE, None))

    async def read(self, key: ShareKey, leader_epoch: int) -> ShareState | Outcome:
        def state(result: dict[str, Any]) -> ShareState:
            return ShareState(result["state_epoch"], leader_epoch, result["start_offset"], tuple(
                StateBatch(b["first_offset"], b["last_offset"], b["delivery_state"], b["delivery_count"])
                for b in result["state_batches"]))

        return await self._ask(key, lambda: self.coordinator.read(key, leader_epoch), READ, 0,
                               {"leader_epoch": leader_epoch}, state)

    async def write(self, key: ShareKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch], delivery_complete_count: int) -> Outcome:
        return await self._ask(
            key, lambda: self.coordinator.write(key, state_epoch, leader_epoch, start_offset, batches,
                                                delivery_complete_count),
            WRITE, 1, {"state_epoch": state_epoch, "leader_epoch": leader_epoch, "start_offset": start_offset,
                       "delivery_complete_count": delivery_complete_count, "state_batches": _batches(batches)},
            lambda _: (ErrorCode.NONE, None))

    async def delete(self, key: ShareKey) -> Outcome:
        """The share-partition's state gone (a share group or its offsets deleted)."""
        return await self._ask(key, lambda: self.coordinator.delete(key), DELETE, 0, {},
                               lambda _: (ErrorCode.NONE, None))

    async def read_summary(self, key: ShareKey) -> ShareState | Outcome:
        """The start offset, epochs and done count of a share-partition (start offset -1: no state)."""
        def summary(result: dict[str, Any]) -> ShareState:
            return ShareState(result["state_epoch"], result["leader_epoch"], result["start_offset"],
                              delivery_complete_count=result.get("delivery_complete_count", -1))

        return await self._ask(key, lambda: self.coordinator.read_summary(key), READ_SUMMARY, 1,
                               {"leader_epoch": -1}, summary)
