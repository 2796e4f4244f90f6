"""A share group's membership (KIP-932): its members, the group epoch and the target assignment,
driven by ShareGroupHeartbeat.

Like a consumer-protocol group, the group epoch moves when what it must assign changes, and a new
target is computed at most once per assignment interval; unlike one, a member never revokes: it
takes its part of the target on its next heartbeat, since share-group members may share partitions
(the ``simple`` assignor).  Only *initialized* partitions are assigned: a partition's share state
must exist before any member may fetch from it, so a subscribed partition is first initializing
(``initializing``), then initialized once its state is written, and only then assignable; a new
group's members thus first get an empty assignment, as in Kafka.

Plain state with no I/O and no Trio: the group's actor owns it, feeds it the clock and the topics,
initializes what ``to_initialize`` names and turns the ``KafkaError`` it raises into the response.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from pykafkad.coordinator.group.assignors import Assignment
from pykafkad.coordinator.group.consumer_group import TopicImage
from pykafkad.coordinator.group.consumer_group_records import assignment_of, metadata_hash, topic_partitions
from pykafkad.coordinator.group.consumer_member import copy_assignment, same_assignment, to_wire
from pykafkad.coordinator.group.share_assignor import simple
from pykafkad.coordinator.group.share_group_records import (
    CURRENT_MEMBER,
    GROUP_METADATA,
    MEMBER_METADATA,
    STABLE,
    STATE_PARTITIONS,
    TARGET_MEMBER,
    TARGET_METADATA,
    StoredShareGroup,
    share_record_key,
    share_record_value,
)
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode

SHARE_GROUP_TYPE = "share"
JOIN_EPOCH, LEAVE_EPOCH = 0, -1


@dataclass(frozen=True)
class ShareGroupConfig:
    """The broker settings a share group obeys (``group.share.*``)."""

    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_size: int = 200
    assignment_interval_ms: int = 1000


@dataclass(frozen=True)
class ShareHeartbeatFields:
    """A ShareGroupHeartbeat as the handler checked it (None: unchanged since the last one)."""

    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: list[str] | None
    client_id: str
    client_host: str


@dataclass
class ShareMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assignment = field(default_factory=dict)
    session_deadline: float = math.inf


class ShareGroup:
    """One share group's membership; ``heartbeat`` is its entry point."""

    def __init__(self, group_id: str, config: ShareGroupConfig) -> None:
        self.group_id = group_id
        self.config = config
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ShareMember] = {}
        self.target: dict[str, Assignment] = {}
        self.subscribed_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        # Partitions whose share state is being written, and those whose state exists (assignable).
        self.initializing: Assignment = {}
        self.initialized: Assignment = {}
        self.last_assignment_s = -math.inf

    @property
    def state(self) -> str:
        return "Stable" if self.members else "Empty"

    # -- persistence -------------------------------------------------------------------------------

    def records(self, topics: TopicImage) -> dict[bytes, bytes]:
        """Every record that describes the group now, by key; the actor writes those that changed
        and tombstones the keys that are gone."""
        g = self.group_id
        out = {share_record_key(GROUP_METADATA, g): share_record_value(GROUP_METADATA, {
                   "epoch": self.group_epoch, "metadata_hash": metadata_hash(self.subscribed_metadata)}),
               share_record_key(TARGET_METADATA, g): share_record_value(TARGET_METADATA, {
                   "assignment_epoch": self.assignment_epoch, "assignment_timestamp": 0}),
               share_record_key(STATE_PARTITIONS, g): share_record_value(STATE_PARTITIONS, {
                   "initializing_topics": [], "deleting_topics": [], "initialized_topics": [
                       {"topic_id": t, "topic_name": topics.topic_name(t) or "", "partitions": sorted(ps)}
                       for t, ps in sorted(self.initialized.items(), key=lambda i: str(i[0])) if ps]})}
        for m in self.members.values():
            out[share_record_key(MEMBER_METADATA, g, m.member_id)] = share_record_value(MEMBER_METADATA, {
                "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
                "subscribed_topic_names": list(m.subscribed_topic_names)})
            out[share_record_key(CURRENT_MEMBER, g, m.member_id)] = share_record_value(CURRENT_MEMBER, {
                "member_epoch": m.member_epoch, "previous_member_epoch": m.previous_member_epoch, "state": STABLE,
                "assigned_partitions": topic_partitions(m.assigned)})
            out[share_record_key(TARGET_MEMBER, g, m.member_id)] = share_record_value(TARGET_MEMBER, {
                "topic_partitions": topic_partitions(self.target.get(m.member_id, {}))})
        return out

    @classmethod
    def from_stored(cls, group_id: str, config: ShareGroupConfig, stored: StoredShareGroup, topics: TopicImage,
                    now_s: float) -> ShareGroup:
        """The group as its records left it; every member's session starts again from now."""
        group = cls(group_id, config)
        group.group_epoch = stored.epoch
        group.assignment_epoch = stored.assignment_epoch
        for member_id, meta in stored.member_metadata.items():
            current = stored.current.get(member_id, {})
            group.members[member_id] = ShareMember(
                member_id, rack_id=meta["rack_id"], client_id=meta["client_id"], client_host=meta["client_host"],
                subscribed_topic_names=list(meta["subscribed_topic_names"]),
                member_epoch=current.get("member_epoch", 0),
                previous_member_epoch=current.get("previous_member_epoch", 0),
                assigned=assignment_of(current.get("assigned_partitions", [])),
                session_deadline=now_s + config.session_timeout_ms / 1000)
        group.target = {m: assignment_of(t["topic_partitions"]) for m, t in stored.targets.items()
                        if m in group.members}
        group.initialized = {t: set(ps) for t, ps in stored.initialized.items()}
        group.subscribed_metadata = group._subscription_metadata(topics)
        return group

    # -- ShareGroupHeartbeat -----------------------------------------------------------------------

    def heartbeat(self, request: ShareHeartbeatFields, now_s: float, topics: TopicImage,
                  heartbeat_interval_ms: int | None = None) -> dict[str, Any]:
        """The response's fields, or KafkaError with Kafka's code and message."""
        if request.member_epoch == LEAVE_EPOCH:
            member = self.members.get(request.member_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {request.member_id} is not a member of group {self.group_id}.")
            self.remove_member(member.member_id)
            return {"error_code": ErrorCode.NONE, "error_message": None, "member_id": member.member_id,
                    "member_epoch": LEAVE_EPOCH, "heartbeat_interval_ms": 0, "assignment": None}
        member, new_member = self._member_for(request)
        updated = replace(member, rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
                          subscribed_topic_names=(list(request.subscribed_topic_names)
                                                  if request.subscribed_topic_names is not None
                                                  else member.subscribed_topic_names),
                          client_id=request.client_id, client_host=request.client_host)
        bump = new_member or sorted(updated.subscribed_topic_names) != sorted(member.subscribed_topic_names)
        first_subscriber = bump and self.group_epoch == 0 and bool(updated.subscribed_topic_names)
        self.members[updated.member_id] = updated
        metadata = self._subscription_metadata(topics)
        if metadata != self.subscribed_metadata:
            self.subscribed_metadata = metadata
            bump = True
        if self._initialized_assignment_pending():
            bump = True
        if bump:
            self.group_epoch += 2 if first_subscriber else 1
        self._maybe_assign(now_s)
        reconciled = self._reconcile(updated)
        reconciled.session_deadline = now_s + self.config.session_timeout_ms / 1000
        response: dict[str, Any] = {
            "error_code": ErrorCode.NONE, "error_message": None, "member_id": reconciled.member_id,
            "member_epoch": reconciled.member_epoch,
            "heartbeat_interval_ms": heartbeat_interval_ms or self.config.heartbeat_interval_ms,
            "assignment": None,
        }
        full = request.member_epoch == JOIN_EPOCH or request.subscribed_topic_names is not None
        if full or not same_assignment(member.assigned, reconciled.assigned):
            response["assignment"] = {"topic_partitions": to_wire(reconciled.assigned)}
        return response

    def _member_for(self, request: ShareHeartbeatFields) -> tuple[ShareMember, bool]:
        member = self.members.get(request.member_id)
        if request.member_epoch == JOIN_EPOCH:
            if member is not None:
                return member, False
            if len(self.members) >= self.config.max_size:
                raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                 f"The share group has reached its maximum capacity of {self.config.max_size} "
                                 f"members.")
            return ShareMember(request.member_id), True
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {request.member_id} is not a member of group {self.group_id}.")
        received = request.member_epoch
        if received > member.member_epoch or (received < member.member_epoch
                                              and received != member.previous_member_epoch):
            which = "greater" if received > member.member_epoch else "smaller"
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The share group member has a {which} member epoch ({received}) than the one known "
                             f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                             f"partitions and rejoin.")
        return member, False

    def remove_member(self, member_id: str) -> None:
        if self.members.pop(member_id, None) is None:
            return
        self.target.pop(member_id, None)
        self.group_epoch += 1
        if not self.members:
            self.assignment_epoch = self.group_epoch
            self.subscribed_metadata = {}

    # -- initialization and assignment ---------------------------------------------------------------

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def _subscription_metadata(self, topics: TopicImage) -> dict[str, tuple[uuid.UUID, int]]:
        metadata = {}
        for name in self.subscribed_topics():
            found = topics.topic(name)
            if found is not None:
                metadata[name] = found
        return metadata

    def to_initialize(self) -> Assignment:
        """Subscribed partitions with no share state yet, now marked initializing: the caller writes
        their state and then calls ``initialized_now``."""
        wanted: Assignment = {}
        for topic_id, count in self.subscribed_metadata.values():
            known = self.initialized.get(topic_id, set()) | self.initializing.get(topic_id, set())
            missing = set(range(count)) - known
            if missing:
                wanted[topic_id] = missing
                self.initializing.setdefault(topic_id, set()).update(missing)
        return wanted

    def initialized_now(self, partitions: Assignment) -> None:
        for topic_id, ps in partitions.items():
            self.initializing.get(topic_id, set()).difference_update(ps)
            if not self.initializing.get(topic_id):
                self.initializing.pop(topic_id, None)
            self.initialized.setdefault(topic_id, set()).update(ps)

    def state_deleted(self, partitions: Assignment) -> None:
        """These partitions' share state was deleted: a member subscribing again starts them anew."""
        for topic_id, ps in partitions.items():
            left = self.initialized.get(topic_id, set()) - set(ps)
            if left:
                self.initialized[topic_id] = left
            else:
                self.initialized.pop(topic_id, None)

    def _assignable(self) -> dict[uuid.UUID, int]:
        """Topic id -> how many of its partitions, from 0, are initialized (the assignor's input)."""
        out = {}
        for topic_id, count in self.subscribed_metadata.values():
            ready = self.initialized.get(topic_id, set())
            n = 0
            while n < count and n in ready:
                n += 1
            if n:
                out[topic_id] = n
        return out

    def _initialized_assignment_pending(self) -> bool:
        """Whether initialized partitions of subscribed topics are missing from the target."""
        targeted = {(t, p) for a in self.target.values() for t, ps in a.items() for p in ps}
        return any((t, p) not in targeted for t, n in self._assignable().items() for p in range(n)) \
            and self.group_epoch <= self.assignment_epoch

    def _maybe_assign(self, now_s: float) -> None:
        if self.group_epoch <= self.assignment_epoch:
            return
        if now_s < self.last_assignment_s + self.config.assignment_interval_ms / 1000:
            return
        by_name = self.subscribed_metadata
        subscriptions = {m.member_id: frozenset(by_name[n][0] for n in m.subscribed_topic_names if n in by_name)
                         for m in self.members.values()}
        self.target = simple(subscriptions, self._assignable(), self.target)
        self.assignment_epoch = self.group_epoch
        self.last_assignment_s = now_s

    def _reconcile(self, member: ShareMember) -> ShareMember:
        """A share member takes its target at once (there is nothing to revoke first)."""
        if member.member_epoch == self.assignment_epoch:
            return member
        reconciled = replace(member, member_epoch=self.assignment_epoch, previous_member_epoch=member.member_epoch,
                             assigned=copy_assignment(self.target.get(member.member_id, {})))
        self.members[member.member_id] = reconciled
        return reconciled

    # -- timers and ShareGroupDescribe -------------------------------------------------------------

    def next_deadline(self) -> float:
        return min((m.session_deadline for m in self.members.values()), default=math.inf)

    def expired_members(self, now_s: float) -> list[str]:
        return [m.member_id for m in self.members.values() if m.session_deadline <= now_s]

    def describe(self, topics: TopicImage) -> dict[str, Any]:
        members = [{
            "member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.member_epoch,
            "client_id": m.client_id, "client_host": m.client_host,
            "subscribed_topic_names": list(m.subscribed_topic_names),
            "assignment": {"topic_partitions": [
                {"topic_id": tp["topic_id"], "topic_name": topics.topic_name(tp["topic_id"]) or "",
                 "partitions": tp["partitions"]} for tp in to_wire(m.assigned)]},
        } for m in self.members.values()]
        return {"error_code": ErrorCode.NONE, "error_message": None, "group_id": self.group_id,
                "group_state": self.state, "group_epoch": self.group_epoch,
                "assignment_epoch": self.assignment_epoch, "assignor_name": "simple", "members": members}
