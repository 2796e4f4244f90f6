"""A consumer-protocol group (KIP-848): its members, group epoch, target assignment and the
reconciliation of each member towards it, driven by ConsumerGroupHeartbeat.

The group epoch moves whenever what the group must assign changes: a member joins or leaves, a
subscription changes, a subscribed topic appears, disappears or grows.  When the group epoch is ahead
of the assignment epoch, the group's server-side assignor computes a new target assignment (at most
once per ``group.consumer.assignment.interval.ms``, as Kafka 4.4 batches them), and each member then
moves towards its part of it one heartbeat at a time (``reconciliation``).  A member that stops
heartbeating is removed after its session timeout; one that does not revoke partitions within its
rebalance timeout is fenced.

This is plain state with no I/O and no Trio: the group's actor owns it, feeds it the clock and the
topic metadata, and turns the ``KafkaError`` it raises into the response.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pykafkad.coordinator.group.assignors import ASSIGNORS, Assignment
from pykafkad.coordinator.group.consumer_group_records import (
    CURRENT_MEMBER,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_MEMBER,
    TARGET_METADATA,
    StoredConsumerGroup,
    assignment_of,
    metadata_hash,
    record_key,
    record_value,
    topic_partitions,
)
from pykafkad.coordinator.group.consumer_member import (
    JOIN_EPOCH,
    LEAVE_EPOCH,
    STATE_CODES,
    STATIC_LEAVE_EPOCH,
    ClassicMetadata,
    ConsumerMember,
    MemberState,
    from_wire,
    same_assignment,
    to_wire,
)
from pykafkad.coordinator.group.reconciliation import reconcile
from pykafkad.errors import KafkaError
from pykafkad.regular_expression import whole_name_matcher
from wire.error_codes import ErrorCode

# ConsumerGroupDescribe's member types: a member that speaks the classic protocol, or this one.
CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1


class TopicImage(Protocol):
    """The topics as the group coordinator sees them now."""

    def topic(self, name: str) -> tuple[uuid.UUID, int] | None:
        """A topic's id and partition count, None when it does not exist."""

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...

    def regex_candidates(self) -> Iterable[str]:
        """The topics a regular expression may subscribe to (not the internal ones)."""

    def consumer_timeouts(self, group_id: str) -> tuple[int, int]:
        """The group's session timeout and heartbeat interval: its group configs', else the broker's."""


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """The broker settings a consumer-protocol group obeys."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    max_size: int
    assignors: tuple[str, ...]
    assignment_interval_ms: int


@dataclass(frozen=True)
class HeartbeatFields:
    """A ConsumerGroupHeartbeat as the handler checked it (None: unchanged since the last one)."""

    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topic_names: list[str] | None
    subscribed_topic_regex: str | None
    server_assignor: str | None
    topic_partitions: list[dict[str, Any]] | None
    client_id: str
    client_host: str


class ConsumerGroup:
    """One consumer-protocol group's membership; ``heartbeat`` is its one entry point."""

    def __init__(self, group_id: str, config: ConsumerGroupConfig) -> None:
        self.group_id = group_id
        self.config = config
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target: dict[str, Assignment] = {}
        # What the last target was computed from: topic name -> (id, partition count).
        self.subscribed_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self.last_assignment_s = -math.inf
        self.stored_metadata_hash = 0
        # records(): each member's encoded records, and what they were encoded from.
        self._encoded: dict[str, tuple[object, list[tuple[bytes, bytes]]]] = {}
        self._encoded_objects: list[object] = []

    # -- its records in __consumer_offsets ------------------------------------------------------

    def records(self) -> dict[bytes, bytes]:
        """Every record that describes the group now, by key; the actor writes those that changed
        and tombstones the keys that are gone."""
        g = self.group_id
        out = {record_key(GROUP_METADATA, g): record_value(GROUP_METADATA, {
                   "epoch": self.group_epoch, "metadata_hash": metadata_hash(self.subscribed_metadata)}),
               record_key(TARGET_METADATA, g): record_value(TARGET_METADATA,
                                                            {"assignment_epoch": self.assignment_epoch})}
        encoded: dict[str, tuple[object, list[tuple[bytes, bytes]]]] = {}
        for m in self.members.values():
            # A member's records are encoded again only when it changed: a change replaces the
            # member object (``dataclasses.replace``), and a new target replaces its sets.
            target = self.target.get(m.member_id)
            cached = self._encoded.get(m.member_id)
            if cached is not None and cached[0] == (id(m), id(target)):
                encoded[m.member_id] = cached
                out.update(cached[1])
                continue
            member_records = [
                (record_key(MEMBER_METADATA, g, m.member_id), record_value(MEMBER_METADATA, {
                    "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
                    "client_host": m.client_host, "subscribed_topic_names": list(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "rebalance_timeout_ms": m.rebalance_timeout_ms, "server_assignor": m.server_assignor,
                    "classic_member_metadata": None if m.classic is None else {
                        "session_timeout_ms": m.classic.session_timeout_ms,
                        "supported_protocols": [{"name": n, "metadata": md} for n, md in m.classic.protocols]}})),
                (record_key(CURRENT_MEMBER, g, m.member_id), record_value(CURRENT_MEMBER, {
                    "member_epoch": m.member_epoch, "previous_member_epoch": m.previous_member_epoch,
                    "state": STATE_CODES[m.state], "assigned_partitions": topic_partitions(m.assigned),
                    "partitions_pending_revocation": topic_partitions(m.pending_revocation)})),
            ]
            if target is not None:
                member_records.append((record_key(TARGET_MEMBER, g, m.member_id), record_value(
                    TARGET_MEMBER, {"topic_partitions": topic_partitions(target)})))
            encoded[m.member_id] = ((id(m), id(target)), member_records)
            out.update(member_records)
        # Keeping the objects alive with their ids keeps the ids from being reused by new objects.
        self._encoded = {k: (key, records) for k, (key, records) in encoded.items()}
        self._encoded_objects = [(m, self.target.get(m.member_id)) for m in self.members.values()]
        return out

    @classmethod
    def from_stored(cls, group_id: str, config: ConsumerGroupConfig, stored: StoredConsumerGroup,
                    now_s: float) -> ConsumerGroup:
        """The group as its records left it; every member's session starts again from now."""
        group = cls(group_id, config)
        group.group_epoch = stored.epoch
        group.assignment_epoch = stored.assignment_epoch
        states = {code: state for state, code in STATE_CODES.items()}
        for member_id, meta in stored.member_metadata.items():
            current = stored.current.get(member_id, {})
            classic = meta.get("classic_member_metadata")
            classic_metadata = None if classic is None else ClassicMetadata(
                classic["session_timeout_ms"], tuple((p["name"], bytes(p["metadata"]))
                                                     for p in classic["supported_protocols"]))
            session_ms = config.session_timeout_ms if classic is None else classic["session_timeout_ms"]
            member = ConsumerMember(
                member_id, instance_id=meta["instance_id"], rack_id=meta["rack_id"], client_id=meta["client_id"],
                client_host=meta["client_host"], rebalance_timeout_ms=meta["rebalance_timeout_ms"],
                subscribed_topic_names=list(meta["subscribed_topic_names"]),
                subscribed_topic_regex=meta["subscribed_topic_regex"], server_assignor=meta["server_assignor"],
                member_epoch=current.get("member_epoch", 0),
                previous_member_epoch=current.get("previous_member_epoch", 0),
                state=states.get(current.get("state", 0), MemberState.STABLE),
                assigned=assignment_of(current.get("assigned_partitions", [])),
                pending_revocation=assignment_of(current.get("partitions_pending_revocation", [])),
                classic=classic_metadata, session_deadline=now_s + session_ms / 1000)
            if member.state == MemberState.UNREVOKED_PARTITIONS and classic is None:
                member.rebalance_deadline = now_s + max(member.rebalance_timeout_ms, 0) / 1000
            group.members[member_id] = member
            if member.instance_id is not None:
                group.static_members[member.instance_id] = member_id
        group.target = {m: assignment_of(t["topic_partitions"]) for m, t in stored.targets.items()
                        if m in group.members}
        group.stored_metadata_hash = stored.metadata_hash
        return group

    def restore_subscription_metadata(self, topics: TopicImage) -> None:
        """After loading: today's topic metadata is what the stored target was computed from when
        its digest matches the stored one, so loading alone bumps no epoch; a topic that changed
        while nobody coordinated the group bumps it on the next heartbeat."""
        today = self.subscription_metadata(topics)
        if metadata_hash(today) == self.stored_metadata_hash:
            self.subscribed_metadata = today

    # -- what the group looks like ---------------------------------------------------------------

    @property
    def state(self) -> str:
        """Kafka's consumer group state names."""
        if not self.members:
            return "Empty"
        if self.group_epoch != self.assignment_epoch:
            return "Assigning"
        if any(m.state != MemberState.STABLE or m.member_epoch != self.assignment_epoch
               for m in self.members.values() if m.member_epoch != STATIC_LEAVE_EPOCH):
            return "Reconciling"
        return "Stable"

    def assignor_name(self) -> str:
        """The assignor most members ask for, else the broker's first (``group.consumer.assignors``)."""
        chosen = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        if chosen:
            best = max(chosen.values())
            return min(name for name, count in chosen.items() if count == best)
        return self.config.assignors[0]

    def subscribed_topics(self, topics: TopicImage) -> set[str]:
        names: set[str] = set()
        matched: dict[str, set[str]] = {}
        for m in self.members.values():
            names |= self._member_topics(m, topics, matched)
        return names

    @staticmethod
    def _member_topics(member: ConsumerMember, topics: TopicImage,
                       matched: dict[str, set[str]] | None = None) -> set[str]:
        """The topics a member subscribes to; ``matched`` keeps each pattern's topics across the
        members of one pass (members of a group mostly share one pattern: the topics are scanned once)."""
        names = set(member.subscribed_topic_names)
        regex = member.subscribed_topic_regex
        if regex:
            found = matched.get(regex) if matched is not None else None
            if found is None:
                matches = whole_name_matcher(regex)
                found = {n for n in topics.regex_candidates() if matches(n)}
                if matched is not None:
                    matched[regex] = found
            names |= found
        return names

    def owners(self) -> dict[tuple[uuid.UUID, int], str]:
        """Who holds each partition now (assigned, or still to revoke)."""
        owners = {}
        for m in self.members.values():
            for source in (m.assigned, m.pending_revocation):
                for t, ps in source.items():
                    for p in ps:
                        owners[(t, p)] = m.member_id
        return owners

    # -- the heartbeat ---------------------------------------------------------------------------

    def heartbeat(self, request: HeartbeatFields, now_s: float, topics: TopicImage) -> dict[str, Any]:
        """Answer one heartbeat (the response's fields), or raise KafkaError with Kafka's code and message."""
        session_timeout_ms, heartbeat_interval_ms = topics.consumer_timeouts(self.group_id)
        if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return self._leave(request)
        joining = request.member_epoch == JOIN_EPOCH
        if joining and request.member_id not in self.members and len(self.members) >= self.config.max_size:
            raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                             f"The consumer group has reached its maximum capacity of {self.config.max_size} members.")
        member, new_member = self._member_for(request, joining)
        updated = replace(
            member,
            instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            server_assignor=request.server_assignor if request.server_assignor is not None else member.server_assignor,
            subscribed_topic_names=(list(request.subscribed_topic_names) if request.subscribed_topic_names is not None
                                    else member.subscribed_topic_names),
            subscribed_topic_regex=(request.subscribed_topic_regex if request.subscribed_topic_regex is not None
                                    else member.subscribed_topic_regex),
            client_id=request.client_id, client_host=request.client_host, classic=None,
            join_deadline=math.inf, sync_deadline=math.inf,
        )
        if updated.subscribed_topic_regex == "":
            updated.subscribed_topic_regex = None
        bump = new_member or (updated.subscription(), updated.server_assignor, updated.rack_id) != (
            member.subscription(), member.server_assignor, member.rack_id)
        names, regex = updated.subscription()
        first_subscriber = bump and self.group_epoch == 0 and bool(names or regex)
        self.members[updated.member_id] = updated
        if updated.instance_id is not None:
            self.static_members[updated.instance_id] = updated.member_id
        metadata = self.subscription_metadata(topics)
        if metadata != self.subscribed_metadata:
            self.subscribed_metadata = metadata
            bump = True
        if bump:
            # A brand-new group whose first member subscribes to anything starts at epoch 2, as Kafka
            # 4.4's coordinator answers (its subscription and its topic metadata count as two changes).
            self.group_epoch += 2 if first_subscriber else 1
        self.maybe_assign(now_s, topics)
        reported = from_wire(request.topic_partitions) if request.topic_partitions is not None else None
        reconciled = self.reconcile_member(updated, reported, now_s)
        response: dict[str, Any] = {
            "error_code": ErrorCode.NONE, "error_message": None, "member_id": reconciled.member_id,
            "member_epoch": reconciled.member_epoch, "heartbeat_interval_ms": heartbeat_interval_ms,
            "assignment": None,
        }
        full = joining or (request.rebalance_timeout_ms != -1 and request.subscribed_topic_names is not None
                           and request.topic_partitions is not None)
        if full or not same_assignment(member.assigned, reconciled.assigned):
            response["assignment"] = {"topic_partitions": to_wire(reconciled.assigned)}
        reconciled.session_deadline = now_s + session_timeout_ms / 1000
        return response

    def _member_for(self, request: HeartbeatFields, joining: bool) -> tuple[ConsumerMember, bool]:
        """The member the heartbeat is from, and whether it is new to the group: found and its epoch
        checked, or (joining) created, taking a static member's place when its instance id left with
        epoch -2."""
        member_id = request.member_id
        if joining:
            if request.instance_id is not None:
                held_by = self.static_members.get(request.instance_id)
                if held_by is not None and held_by != member_id:
                    old = self.members[held_by]
                    if old.uses_classic_protocol:
                        # A classic static member is replaced by one that speaks the consumer
                        # protocol (a rolling upgrade): it starts from epoch 0 with the partitions.
                        del self.members[held_by]
                        self.target[member_id] = self.target.pop(held_by, {})
                        return replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0,
                                       session_deadline=math.inf), False
                    if old.member_epoch != STATIC_LEAVE_EPOCH:
                        raise KafkaError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                         f"Static member {member_id} with instance id {request.instance_id} cannot "
                                         f"join the group because the instance id is owned by {held_by} member.")
                    # The static member comes back under a new member id with its old epoch and partitions.
                    del self.members[held_by]
                    self.target[member_id] = self.target.pop(held_by, {})
                    return replace(old, member_id=member_id, member_epoch=old.previous_member_epoch,
                                   session_deadline=math.inf), False
            existing = self.members.get(member_id)
            if existing is None:
                return ConsumerMember(member_id), True
            # A member rejoining with epoch 0 lost its partitions: they are released for reassignment.
            return replace(existing, member_epoch=0, previous_member_epoch=0, state=MemberState.STABLE,
                           assigned={}, pending_revocation={}), False
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {self.group_id}.")
        holder = self.static_members.get(request.instance_id) if request.instance_id is not None else member_id
        if holder != member_id:
            if holder is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {request.instance_id} was fenced by member "
                             f"{holder}.")
        received = request.member_epoch
        if received > member.member_epoch:
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The consumer group member has a greater member epoch ({received}) than the one known by "
                             f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                             f"partitions and rejoin.")
        if received < member.member_epoch:
            reported = from_wire(request.topic_partitions) if request.topic_partitions is not None else None
            if received != member.previous_member_epoch or reported is None or any(
                    not ps <= member.assigned.get(t, set()) for t, ps in reported.items()):
                raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a smaller member epoch ({received}) than the one "
                                 f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                                 f"all its partitions and rejoin.")
        return member, False

    def _leave(self, request: HeartbeatFields) -> dict[str, Any]:
        member = self.members.get(request.member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {request.member_id} is not a member of group {self.group_id}.")
        if request.member_epoch == STATIC_LEAVE_EPOCH and member.instance_id is not None:
            # A static member leaving temporarily keeps its place, epoch and partitions until its
            # session times out; the same instance id may take them back.
            # What it had yet to revoke is released now (the client revoked everything as it left),
            # and no rebalance timeout can fence it while it is away.
            self.members[member.member_id] = replace(member, member_epoch=STATIC_LEAVE_EPOCH,
                                                     previous_member_epoch=member.member_epoch,
                                                     pending_revocation={}, state=MemberState.STABLE,
                                                     rebalance_deadline=math.inf)
        else:
            self.remove_member(member.member_id)
        return {"error_code": ErrorCode.NONE, "error_message": None, "member_id": member.member_id,
                "member_epoch": request.member_epoch, "heartbeat_interval_ms": 0, "assignment": None}

    def remove_member(self, member_id: str, bump: bool = True) -> ConsumerMember | None:
        """A member left, timed out or was fenced: its partitions are free and the group epoch moves
        (once for several members leaving together: the caller bumps it with ``bump_epoch``)."""
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        self.target.pop(member_id, None)
        if bump:
            self.bump_epoch()
        return member

    def bump_epoch(self) -> None:
        self.group_epoch += 1
        if not self.members:
            # Nothing left to assign: the (empty) target is at the group's epoch.
            self.assignment_epoch = self.group_epoch
            self.subscribed_metadata = {}

    # -- target assignment and reconciliation ----------------------------------------------------

    def subscription_metadata(self, topics: TopicImage) -> dict[str, tuple[uuid.UUID, int]]:
        metadata = {}
        for name in self.subscribed_topics(topics):
            found = topics.topic(name)
            if found is not None:
                metadata[name] = found
        return metadata

    def maybe_assign(self, now_s: float, topics: TopicImage, at_once: bool = False) -> bool:
        """Compute a new target when the group epoch is ahead of it and the assignment interval passed
        (``at_once``: whether it passed or not)."""
        if self.group_epoch <= self.assignment_epoch:
            return False
        if not at_once and now_s < self.last_assignment_s + self.config.assignment_interval_ms / 1000:
            return False
        ordered = dict(sorted(self.subscribed_metadata.items()))
        topic_partitions = {topic_id: count for topic_id, count in ordered.values()}
        subscriptions = {}
        matched: dict[str, set[str]] = {}
        for m in self.members.values():
            names = self._member_topics(m, topics, matched)
            subscriptions[m.member_id] = frozenset(ordered[n][0] for n in names if n in ordered)
        assignor = ASSIGNORS[self.assignor_name()]
        self.target = assignor(subscriptions, topic_partitions, self.target)
        self.assignment_epoch = self.group_epoch
        self.last_assignment_s = now_s
        return True

    def reconcile_member(self, member: ConsumerMember, reported: Assignment | None,
                         now_s: float) -> ConsumerMember:
        """The member moved towards its target as far as it may now (``reported``: the partitions it
        says it owns, None when it did not say), and kept."""
        owners = self.owners()

        def owned_elsewhere(topic_id: uuid.UUID, partition: int) -> bool:
            owner = owners.get((topic_id, partition))
            return owner is not None and owner != member.member_id

        was_revoking = member.state == MemberState.UNREVOKED_PARTITIONS
        reconciled = reconcile(member, self.assignment_epoch, self.target.get(member.member_id, {}),
                               owned_elsewhere, reported)
        if reconciled.state == MemberState.UNREVOKED_PARTITIONS and not reconciled.uses_classic_protocol:
            # (A classic member has its join and sync timeouts instead, as in Kafka.)
            if not was_revoking or reconciled.member_epoch != member.member_epoch:
                reconciled.rebalance_deadline = now_s + max(reconciled.rebalance_timeout_ms, 0) / 1000
        else:
            reconciled.rebalance_deadline = math.inf
        self.members[reconciled.member_id] = reconciled
        return reconciled

    # -- timers ----------------------------------------------------------------------------------

    def next_deadline(self) -> float:
        deadlines = [math.inf]
        for m in self.members.values():
            deadlines += [m.session_deadline, m.rebalance_deadline, m.join_deadline, m.sync_deadline]
        return min(deadlines)

    def expired_members(self, now_s: float) -> list[tuple[str, str]]:
        """The members to fence now, each with why: their session, revocation, join or sync time ran
        out.  The caller removes them (``remove_member``, or turns the group back into a classic one);
        the new target is computed on the next heartbeat, as Kafka does."""
        expired = []
        for m in self.members.values():
            if m.session_deadline <= now_s:
                expired.append((m.member_id, "session expired"))
            elif m.rebalance_deadline <= now_s:
                expired.append((m.member_id, "did not revoke its partitions within its rebalance timeout"))
            elif m.join_deadline <= now_s:
                expired.append((m.member_id, "the classic member failed to join within the rebalance timeout"))
            elif m.sync_deadline <= now_s:
                expired.append((m.member_id, "the classic member failed to sync within the rebalance timeout"))
        return expired

    def fire_timers(self, now_s: float, log: Callable[[str], None]) -> list[ConsumerMember]:
        """Remove the members ``expired_members`` names; the removed ones."""
        removed = []
        for member_id, why in self.expired_members(now_s):
            log(f"member {member_id}: {why}; fenced")
            member = self.remove_member(member_id)
            if member is not None:
                removed.append(member)
        return removed

    def only_classic_members_except(self, member_id: str) -> bool:
        """Whether every member but ``member_id`` (one that speaks the consumer protocol) speaks the
        classic protocol, and there is at least one: the group may then turn back into a classic group
        as that member goes (Kafka's online downgrade)."""
        member = self.members.get(member_id)
        if member is None or member.uses_classic_protocol or len(self.members) < 2:
            return False
        return all(m.uses_classic_protocol for m in self.members.values() if m.member_id != member_id)

    # -- offsets ---------------------------------------------------------------------------------

    def commit_error(self, member_id: str, member_epoch: int, transactional: bool = False,
                     version: int | None = None) -> ErrorCode | None:
        """Whether a commit (or a fetch naming a member) from ``member_id`` at ``member_epoch`` is taken;
        ``version`` is OffsetCommit's (a consumer-protocol member commits with v9 or later).  A classic
        member's generation is its member epoch, and a wrong one is ILLEGAL_GENERATION."""
        if member_epoch < 0 and not self.members:
            return None  # an admin client or a consumer outside the group, while it is empty
        if transactional and member_epoch < 0 and not member_id:
            return None
        member = self.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if version is not None and version < 9 and not transactional and not member.uses_classic_protocol:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH
        return None

    # -- ConsumerGroupDescribe ---------------------------------------------------------------------

    def describe(self, topics: TopicImage) -> dict[str, Any]:
        def named(assignment: Assignment) -> dict[str, Any]:
            parts = []
            for tp in to_wire(assignment):
                parts.append({"topic_id": tp["topic_id"], "topic_name": topics.topic_name(tp["topic_id"]) or "",
                              "partitions": tp["partitions"]})
            return {"topic_partitions": parts}

        members = [{
            "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
            "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
            "subscribed_topic_names": list(m.subscribed_topic_names),
            "subscribed_topic_regex": m.subscribed_topic_regex or "",
            "assignment": named(m.owned), "target_assignment": named(self.target.get(m.member_id, {})),
            "member_type": CLASSIC_MEMBER_TYPE if m.uses_classic_protocol else CONSUMER_MEMBER_TYPE,
        } for m in self.members.values()]
        return {"error_code": ErrorCode.NONE, "error_message": None, "group_id": self.group_id,
                "group_state": self.state, "group_epoch": self.group_epoch,
                "assignment_epoch": self.assignment_epoch, "assignor_name": self.assignor_name(),
                "members": members}
