"""InitializeShareGroupState (83), ReadShareGroupState (84), WriteShareGroupState (85),
DeleteShareGroupState (86) and ReadShareGroupStateSummary (87): the share coordinator's APIs, sent
by partition leaders (and the group coordinator) to the broker leading a share-partition's state,
as Kafka's brokers send them to each other.  CLUSTER_ACTION on the cluster is needed, as in Kafka;
each partition's answer comes from ``coordinator/share/coordinator.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pykafkad.coordinator.share.coordinator import Outcome
from pykafkad.coordinator.share.share_state_records import ShareKey, ShareState, StateBatch
from pykafkad.handlers.access import Operation, cluster_allowed
from pykafkad.handlers.api import Api, RequestContext
from pykafkad.handlers.share_groups import share_groups_enabled
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

PartitionAnswer = Callable[[ShareKey, dict[str, Any]], Awaitable[dict[str, Any]]]


def _outcome(result: Outcome) -> dict[str, Any]:
    return {"error_code": result[0], "error_message": result[1]}


async def _each(broker: Broker, ctx: RequestContext, body: dict[str, Any], answer: PartitionAnswer,
                failed: Callable[[ErrorCode], dict[str, Any]]) -> dict[str, Any]:
    """Every named partition answered by ``answer``, or all refused with one error."""
    refusal = None
    if not cluster_allowed(broker, ctx, Operation.CLUSTER_ACTION):
        refusal = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    elif not share_groups_enabled(broker):
        refusal = ErrorCode.UNSUPPORTED_VERSION
    results = []
    for topic in body["topics"]:
        partitions = []
        for part in topic["partitions"]:
            key = (body["group_id"], topic["topic_id"], part["partition"])
            answered = failed(refusal) if refusal is not None else await answer(key, part)
            partitions.append({"partition": part["partition"], **answered})
        results.append({"topic_id": topic["topic_id"], "partitions": partitions})
    return {"results": results}


def _state_error(code: ErrorCode) -> dict[str, Any]:
    return {"error_code": code, "error_message": None, "state_epoch": 0, "leader_epoch": 0, "start_offset": -1,
            "delivery_complete_count": -1, "state_batches": []}


async def initialize(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    async def answer(key: ShareKey, part: dict[str, Any]) -> dict[str, Any]:
        return _outcome(await broker.share_coordinator.initialize(key, part["state_epoch"], part["start_offset"]))

    return await _each(broker, ctx, body, answer, lambda c: _outcome((c, None)))


async def read(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    async def answer(key: ShareKey, part: dict[str, Any]) -> dict[str, Any]:
        state = await broker.share_coordinator.read(key, part["leader_epoch"])
        if not isinstance(state, ShareState):
            return {**_state_error(state[0]), "error_message": state[1]}
        return {"error_code": ErrorCode.NONE, "error_message": None, "state_epoch": state.state_epoch,
                "start_offset": state.start_offset, "state_batches": [
                    {"first_offset": b.first_offset, "last_offset": b.last_offset,
                     "delivery_state": b.delivery_state, "delivery_count": b.delivery_count}
                    for b in state.batches]}

    return await _each(broker, ctx, body, answer, _state_error)


async def write(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    async def answer(key: ShareKey, part: dict[str, Any]) -> dict[str, Any]:
        batches = [StateBatch(b["first_offset"], b["last_offset"], b["delivery_state"], b["delivery_count"])
                   for b in part["state_batches"]]
        return _outcome(await broker.share_coordinator.write(
            key, part["state_epoch"], part["leader_epoch"], part["start_offset"], batches,
            part.get("delivery_complete_count", -1)))

    return await _each(broker, ctx, body, answer, lambda c: _outcome((c, None)))


async def delete(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    async def answer(key: ShareKey, _part: dict[str, Any]) -> dict[str, Any]:
        return _outcome(await broker.share_coordinator.delete(key))

    return await _each(broker, ctx, body, answer, lambda c: _outcome((c, None)))


async def read_summary(broker: Broker, ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    async def answer(key: ShareKey, _part: dict[str, Any]) -> dict[str, Any]:
        state = await broker.share_coordinator.read_summary(key)
        if not isinstance(state, ShareState):
            return {**_state_error(state[0]), "error_message": state[1]}
        return {"error_code": ErrorCode.NONE, "error_message": None, "state_epoch": state.state_epoch,
                "leader_epoch": state.leader_epoch, "start_offset": state.start_offset,
                "delivery_complete_count": state.delivery_complete_count}

    return await _each(broker, ctx, body, answer, _state_error)


APIS = [
    Api(83, "InitializeShareGroupState", 0, 0, initialize),
    Api(84, "ReadShareGroupState", 0, 0, read),
    Api(85, "WriteShareGroupState", 0, 1, write),
    Api(86, "DeleteShareGroupState", 0, 0, delete),
    Api(87, "ReadShareGroupStateSummary", 0, 1, read_summary),
]
