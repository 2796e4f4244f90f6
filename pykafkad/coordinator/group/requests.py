"""The requests a group's actor takes: one small typed message per kind.

Handlers and the coordinator build these and ``GroupCoordinator.call`` sends them to the group's
actor, which picks its handler by the message's type.  Each message knows what answering it may
do (``writes``: it may append to ``__consumer_offsets``, which must exist first; ``replicated``:
it is answered only once what its group wrote is replicated) and carries the answer of a group
that cannot take it (a broker that does not coordinate the group, a write the in-sync replicas did
not take), in its own response's shape.  A mistyped kind or field fails where it is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from pykafkad.coordinator.group.consumer_group import HeartbeatFields
from pykafkad.coordinator.group.share_group import ShareHeartbeatFields
from wire.error_codes import ErrorCode

NO_GENERATION = -1


def join_error(code: ErrorCode, member_id: str = "") -> dict[str, Any]:
    return {"error_code": code, "generation_id": NO_GENERATION, "protocol_type": None, "protocol_name": None,
            "leader": "", "skip_assignment": False, "member_id": member_id, "members": []}


def sync_error(code: ErrorCode) -> dict[str, Any]:
    return {"error_code": code, "protocol_type": None, "protocol_name": None, "assignment": b""}


@dataclass(frozen=True)
class GroupRequest:
    """What every message to a group's actor has."""

    writes: ClassVar[bool] = False
    replicated: ClassVar[bool] = False

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        """The answer when the group cannot take this request."""
        return {"error_code": code}


# -- the classic protocol's membership ------------------------------------------------------------

@dataclass(frozen=True)
class JoinGroup(GroupRequest):
    writes: ClassVar[bool] = True
    # A consumer-protocol group answers a classic member's join with what it wrote (KIP-848).
    replicated: ClassVar[bool] = True

    version: int
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return join_error(code, self.member_id)


@dataclass(frozen=True)
class SyncGroup(GroupRequest):
    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    member_id: str
    generation_id: int
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: list[dict[str, Any]]

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return sync_error(code)


@dataclass(frozen=True)
class Heartbeat(GroupRequest):
    writes: ClassVar[bool] = True

    member_id: str
    generation_id: int
    group_instance_id: str | None


@dataclass(frozen=True)
class LeaveGroup(GroupRequest):
    """Members leaving, each ``{"member_id", "group_instance_id"}``."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    members: list[dict[str, Any]]

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "members": []}


# -- the consumer protocol's membership (KIP-848) ----------------------------------------------------

def consumer_heartbeat_error(code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval_ms": 0, "assignment": None}


@dataclass(frozen=True)
class ConsumerHeartbeat(GroupRequest):
    """ConsumerGroupHeartbeat, checked by the handler for what needs no group state."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    fields: HeartbeatFields

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return consumer_heartbeat_error(code)


@dataclass(frozen=True)
class DescribeConsumerGroup(GroupRequest):
    """ConsumerGroupDescribe: the group as the consumer protocol describes it."""

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "error_message": None, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": []}


# -- share groups' membership (KIP-932) -------------------------------------------------------------

@dataclass(frozen=True)
class ShareHeartbeat(GroupRequest):
    """ShareGroupHeartbeat, checked by the handler for what needs no group state."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    fields: ShareHeartbeatFields
    heartbeat_interval_ms: int | None = None

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return consumer_heartbeat_error(code)


@dataclass(frozen=True)
class DescribeShareGroup(GroupRequest):
    """ShareGroupDescribe: the group as a share group."""

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "error_message": None, "group_id": group_id, "group_state": "",
                "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": []}


@dataclass(frozen=True)
class ShareGroupPartitions(GroupRequest):
    """The partitions a share group has share state for (DescribeShareGroupOffsets with no topics),
    with its epoch and whether it has members (the admin requests that change its state need none)."""

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "error_message": None, "initialized": {}, "group_epoch": -1, "empty": False}


@dataclass(frozen=True)
class NewShareGroup(ShareGroupPartitions):
    """As ShareGroupPartitions, an empty share group made first where there is no group of that
    name (AlterShareGroupOffsets creates the group it names, as Kafka 4.4 does)."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True


@dataclass(frozen=True)
class ShareStateChanged(GroupRequest):
    """Share state was written (AlterShareGroupOffsets) or deleted (DeleteShareGroupOffsets) for
    these partitions of an empty share group: they are initialized, or no longer, from now on."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    initialized: dict[Any, frozenset[int]] = field(default_factory=dict)
    deleted: dict[Any, frozenset[int]] = field(default_factory=dict)

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "error_message": None}


# -- committed offsets ----------------------------------------------------------------------------

def _per_partition(code: ErrorCode, topics: list[dict[str, Any]]) -> dict[str, Any]:
    return {"results": {(t["name"], p["partition_index"]): code for t in topics for p in t["partitions"]}}


@dataclass(frozen=True)
class CommitOffsets(GroupRequest):
    """OffsetCommit; ``topics`` as the request names them (``name``, ``partitions``)."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    version: int
    generation_id: int
    member_id: str
    group_instance_id: str | None
    topics: list[dict[str, Any]]

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return _per_partition(code, self.topics)


@dataclass(frozen=True, kw_only=True)
class CommitTransactionalOffsets(CommitOffsets):
    """TxnOffsetCommit: offsets written in the producer's transaction."""

    producer_id: int
    producer_epoch: int


@dataclass(frozen=True)
class TransactionEnded(GroupRequest):
    """A transaction marker reached this group's partition: its offsets count (commit) or go."""

    producer_id: int
    commit: bool


@dataclass(frozen=True)
class FetchOffsets(GroupRequest):
    """OffsetFetch; ``topics`` as ``(name, partition indexes)``, or None for every committed offset."""

    replicated: ClassVar[bool] = True

    topics: list[tuple[str, list[int]]] | None = None
    require_stable: bool = False
    # OffsetFetch v9+ (KIP-848): the member asking, checked against a consumer-protocol group.
    member_id: str | None = None
    member_epoch: int = -1

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        if not self.topics:
            return {"error_code": code, "topics": []}
        # Also per partition: OffsetFetch v0-1 has no top-level error code.
        return {"error_code": code, "topics": [
            {"name": name, "partitions": [{"partition_index": i, "committed_offset": -1, "committed_leader_epoch": -1,
                                           "metadata": "", "error_code": code} for i in indexes]}
            for name, indexes in self.topics]}


@dataclass(frozen=True)
class DeleteOffsets(GroupRequest):
    """OffsetDelete; ``topics`` as the request names them."""

    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True

    topics: list[dict[str, Any]] = field(default_factory=list)

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "topics": []}


@dataclass(frozen=True)
class TopicDeleted(GroupRequest):
    """A topic was deleted: its committed offsets leave the group."""

    replicated: ClassVar[bool] = True

    topic: str

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "removed": 0}


# -- administration -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DescribeGroup(GroupRequest):
    """DescribeGroups: the group as the classic protocol describes it."""

    version: int = 0

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code, "group_id": group_id, "group_state": "", "protocol_type": "",
                "protocol_data": "", "members": []}


@dataclass(frozen=True)
class ListGroup(GroupRequest):
    """The group's line in ListGroups (empty when it is not to be listed)."""

    def error_reply(self, group_id: str, code: ErrorCode) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class DeleteGroup(GroupRequest):
    writes: ClassVar[bool] = True
    replicated: ClassVar[bool] = True


@dataclass(frozen=True)
class Unload(GroupRequest):
    """This broker stopped coordinating the group: its actor ends, answering what it holds."""
