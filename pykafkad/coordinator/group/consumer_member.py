"""One member of a consumer-protocol group (KIP-848): what it subscribes to, its member epoch, and
the partitions it owns, waits to revoke, or waits to be given.

A member is owned by its group's actor; nothing else reads or writes it.
"""

from __future__ import annotations

import enum
import math
import uuid
from dataclasses import dataclass, field

from pykafkad.coordinator.group.assignors import Assignment
from pykafkad.metadata.znodes import kafka_uuid

# Member epochs a heartbeat carries: 0 joins, -1 leaves, -2 leaves a static member's place held.
JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


class MemberState(enum.Enum):
    """Where a member is in reconciling towards its target assignment (Kafka's MemberState)."""

    STABLE = "stable"
    # It still owns partitions the target gives others: it keeps its epoch until it revokes them.
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    # Part of its target is still owned by others: it is at the new epoch and waits for them.
    UNRELEASED_PARTITIONS = "unreleased_partitions"


# How ConsumerGroupCurrentMemberAssignment records a state (Kafka's MemberState values).
STATE_CODES = {MemberState.STABLE: 0, MemberState.UNREVOKED_PARTITIONS: 1, MemberState.UNRELEASED_PARTITIONS: 2}


def new_member_id() -> str:
    """A member id as Kafka's ``Uuid.randomUuid().toString()`` writes one."""
    return kafka_uuid(uuid.uuid4())


def copy_assignment(assignment: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in assignment.items() if ps}


def same_assignment(a: Assignment, b: Assignment) -> bool:
    return {t: ps for t, ps in a.items() if ps} == {t: ps for t, ps in b.items() if ps}


def partition_count(assignment: Assignment) -> int:
    return sum(len(ps) for ps in assignment.values())


def from_wire(topic_partitions: list[dict[str, object]]) -> Assignment:
    """The ``TopicPartitions`` of a heartbeat as an assignment."""
    owned: Assignment = {}
    for tp in topic_partitions:
        topic_id = tp["topic_id"]
        assert isinstance(topic_id, uuid.UUID)
        owned.setdefault(topic_id, set()).update(tp["partitions"])  # type: ignore[arg-type]
    return owned


def to_wire(assignment: Assignment) -> list[dict[str, object]]:
    return [{"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(assignment.items(), key=lambda i: str(i[0]))
            if ps]


@dataclass(frozen=True)
class ClassicMetadata:
    """What a member that speaks the classic protocol to a consumer-protocol group joined with
    (Kafka's ClassicMemberMetadata): its session timeout and its protocols, in its order of preference."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        """The protocol it is answered with: its first (Kafka's choice for a classic member here)."""
        return self.protocols[0][0]

    @property
    def metadata(self) -> bytes:
        return self.protocols[0][1]


@dataclass
class ConsumerMember:
    """A member as Kafka's ``ConsumerGroupMember`` keeps it."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    # Set for a member that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat).
    classic: ClassicMetadata | None = None
    # trio.current_time() deadlines: the session, and (while revoking) the rebalance timeout; a
    # classic member instead has to rejoin once told to, and to sync once joined, within it.
    session_deadline: float = math.inf
    rebalance_deadline: float = math.inf
    join_deadline: float = math.inf
    sync_deadline: float = math.inf

    @property
    def owned(self) -> Assignment:
        """Partitions this member holds now: assigned, and those it has yet to revoke."""
        owned = copy_assignment(self.assigned)
        for t, ps in self.pending_revocation.items():
            owned.setdefault(t, set()).update(ps)
        return owned

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def subscription(self) -> tuple[tuple[str, ...], str | None]:
        return tuple(sorted(self.subscribed_topic_names)), self.subscribed_topic_regex
