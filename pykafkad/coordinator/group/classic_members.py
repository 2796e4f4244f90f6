"""Members that speak the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) to a
consumer-protocol group: KIP-848's mixed groups, which let consumers roll from one protocol to the
other while the group keeps working.

A classic member is a ``ConsumerMember`` with ``classic`` set.  The coordinator assigns its partitions
with the group's server-side assignor and reconciles it like any member, one JoinGroup at a time:

- JoinGroup adds or updates the member from its embedded subscription (the owned partitions in it
  are what it reports owning) and answers at once, with the member epoch as the generation, no
  leader and no member list; the member then has its rebalance timeout to sync.
- SyncGroup hands it its current partitions as a ConsumerProtocolAssignment, in the version of its
  subscription.
- Heartbeat answers REBALANCE_IN_PROGRESS while the member has to rejoin: the group epoch moved,
  it has partitions to revoke, or the partitions it waits for are free; it then has its rebalance
  timeout to rejoin.
- LeaveGroup removes it.

These follow Kafka 4.4's ``GroupMetadataManager.classicGroup*ToConsumerGroup``: the same checks in
the same order, with Kafka's errors.  Plain state, no I/O: the group's actor calls these and writes
the group's records.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pykafkad.coordinator.group.assignors import Assignment
from pykafkad.coordinator.group.consumer_group import ConsumerGroup, TopicImage
from pykafkad.coordinator.group.consumer_member import ClassicMetadata, ConsumerMember, MemberState
from pykafkad.coordinator.group.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedProtocol,
    decode_subscription,
    encode_assignment,
    protocol_version,
)
from pykafkad.coordinator.group.requests import Heartbeat, JoinGroup, SyncGroup, join_error
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode


def ids_of(partitions: dict[str, list[int]], topics: TopicImage) -> Assignment:
    """Partitions named by topic, by topic id (those of topics that do not exist are left out)."""
    out: Assignment = {}
    for name, indexes in partitions.items():
        found = topics.topic(name)
        if found is not None and indexes:
            out.setdefault(found[0], set()).update(indexes)
    return out


def names_of(assignment: Assignment, topics: TopicImage) -> dict[str, list[int]]:
    """Partitions by topic id, by topic name (those of topics gone are left out)."""
    out: dict[str, list[int]] = {}
    for topic_id, indexes in assignment.items():
        name = topics.topic_name(topic_id)
        if name is not None and indexes:
            out[name] = sorted(indexes)
    return out


def assignment_bytes(assignment: Assignment, metadata: bytes, topics: TopicImage) -> bytes:
    """A classic member's partitions as its SyncGroup carries them, in its subscription's version."""
    try:
        version = protocol_version(metadata)
    except MalformedProtocol:
        version = 0
    return encode_assignment(names_of(assignment, topics), version)


def supports_classic_protocols(group: ConsumerGroup, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
    """Whether a classic member with these protocols may join: it embeds the consumer protocol, and
    one of its protocols is one every classic member already in the group supports."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    names = {name for name, _ in protocols}
    if not group.members:
        return bool(names)
    supported = [{name for name, _ in m.classic.protocols} for m in group.members.values() if m.classic is not None]
    return any(all(name in s for s in supported) for name in names)


def _member_for_join(group: ConsumerGroup, member_id: str, instance_id: str | None,
                     unknown: bool) -> tuple[ConsumerMember, bool]:
    """The member a JoinGroup is from and whether it is new: a static member joining without its
    member id takes the place of the one holding its instance id, from epoch 0."""
    if instance_id is None:
        existing = group.members.get(member_id)
        return (existing, False) if existing is not None else (ConsumerMember(member_id), True)
    held_by = group.static_members.get(instance_id)
    if unknown:
        if held_by is None:
            return ConsumerMember(member_id), True
        old = group.members.pop(held_by)
        group.target[member_id] = group.target.pop(held_by, {})
        return replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0,
                       rebalance_deadline=math.inf), False
    if held_by is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                         f"Member with instance id {instance_id} is not a member of group {group.group_id}.")
    if held_by != member_id:
        raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                         f"Static member {member_id} with instance id {instance_id} was fenced by member {held_by}.")
    return group.members[held_by], False


def join(group: ConsumerGroup, args: JoinGroup, new_member_id: Callable[[], str], now_s: float,
         topics: TopicImage) -> dict[str, Any]:
    """A JoinGroup to the consumer group: the JoinGroup response; KafkaError when refused."""
    member_id = args.member_id
    unknown = not member_id
    if unknown:
        member_id = new_member_id()
    if member_id not in group.members and len(group.members) >= group.config.max_size:
        raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                         f"The consumer group has reached its maximum capacity of {group.config.max_size} members.")
    if not supports_classic_protocols(group, args.protocol_type, args.protocols):
        raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Member {member_id}'s protocols are not supported.")
    if unknown and args.group_instance_id is None and args.version >= 4:
        # KIP-394: a dynamic member learns its id first and joins again with it.
        return join_error(ErrorCode.MEMBER_ID_REQUIRED, member_id)
    try:
        subscription = decode_subscription(args.protocols[0][1])
    except MalformedProtocol as e:
        raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                         f"Member {member_id}'s embedded consumer protocol is malformed: {e}.") from e
    member, new_member = _member_for_join(group, member_id, args.group_instance_id, unknown)
    updated = replace(
        member, member_id=member_id,
        instance_id=args.group_instance_id if args.group_instance_id is not None else member.instance_id,
        rack_id=subscription.rack_id if subscription.rack_id is not None else member.rack_id,
        rebalance_timeout_ms=(args.rebalance_timeout_ms if args.rebalance_timeout_ms != -1
                              else member.rebalance_timeout_ms),
        subscribed_topic_names=list(subscription.topics), subscribed_topic_regex=None,
        client_id=args.client_id, client_host=args.client_host,
        classic=ClassicMetadata(args.session_timeout_ms, tuple(args.protocols)),
    )
    bump = new_member or (updated.subscription(), updated.rack_id) != (member.subscription(), member.rack_id)
    group.members[member_id] = updated
    if updated.instance_id is not None:
        group.static_members[updated.instance_id] = member_id
    metadata = group.subscription_metadata(topics)
    if metadata != group.subscribed_metadata:
        group.subscribed_metadata = metadata
        bump = True
    if bump:
        group.bump_epoch()
    # A classic member learns its epoch only from JoinGroup and must rejoin while it is behind the
    # group's: the target is computed now rather than batched, or it would rejoin in a loop until
    # group.consumer.assignment.interval.ms passed.
    group.maybe_assign(now_s, topics, at_once=True)
    reconciled = group.reconcile_member(updated, ids_of(subscription.owned_partitions, topics), now_s)
    reconciled.join_deadline = math.inf
    reconciled.session_deadline = now_s + args.session_timeout_ms / 1000
    reconciled.sync_deadline = now_s + max(args.rebalance_timeout_ms, 0) / 1000
    assert reconciled.classic is not None
    return {"error_code": ErrorCode.NONE, "generation_id": reconciled.member_epoch,
            "protocol_type": CONSUMER_PROTOCOL_TYPE, "protocol_name": reconciled.classic.protocol_name,
            "leader": "", "skip_assignment": False, "member_id": member_id, "members": []}


def _classic_member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
    """The member a SyncGroup or Heartbeat is from: it exists, holds its instance id, speaks classic."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {group.group_id}.")
    else:
        held_by = group.static_members.get(instance_id)
        if held_by is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member with instance id {instance_id} is not a member of group {group.group_id}.")
        if held_by != member_id:
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {instance_id} was fenced by member "
                             f"{held_by}.")
        member = group.members[held_by]
    if member.classic is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member.member_id} does not use the classic protocol.")
    return member


def _check_generation(member: ConsumerMember, generation_id: int) -> None:
    if generation_id != member.member_epoch:
        raise KafkaError(ErrorCode.ILLEGAL_GENERATION,
                         f"The request generation id {generation_id} is not equal to the member epoch "
                         f"{member.member_epoch} of member {member.member_id}.")


def _told_to_rejoin(member: ConsumerMember, now_s: float) -> None:
    """It must rejoin within its rebalance timeout (counted from the first time it is told)."""
    if member.join_deadline == math.inf:
        member.join_deadline = now_s + max(member.rebalance_timeout_ms, 0) / 1000


def sync(group: ConsumerGroup, args: SyncGroup, now_s: float, topics: TopicImage) -> dict[str, Any]:
    """A SyncGroup to the consumer group: the member's partitions; KafkaError when refused."""
    member = _classic_member(group, args.member_id, args.group_instance_id)
    _check_generation(member, args.generation_id)
    classic = member.classic
    assert classic is not None
    if args.protocol_type is not None and args.protocol_type != CONSUMER_PROTOCOL_TYPE:
        raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                         f"The protocol type {args.protocol_type} from member {member.member_id} request is not "
                         f"equal to the group protocol type {CONSUMER_PROTOCOL_TYPE}.")
    if args.protocol_name is not None and args.protocol_name != classic.protocol_name:
        raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                         f"The protocol name {args.protocol_name} from member {member.member_id} request is not "
                         f"equal to the protocol name {classic.protocol_name} returned in the join response.")
    if group.group_epoch > member.member_epoch and member.state != MemberState.UNREVOKED_PARTITIONS:
        # A newer epoch than the one it joined at: it rejoins first (unless it is still revoking,
        # in which case this sync is how it learns what to revoke).
        _told_to_rejoin(member, now_s)
        raise KafkaError(ErrorCode.REBALANCE_IN_PROGRESS,
                         f"A new rebalance is triggered in group {group.group_id} and member {member.member_id} "
                         f"should rejoin to catch up.")
    member.sync_deadline = math.inf
    member.session_deadline = now_s + classic.session_timeout_ms / 1000
    return {"error_code": ErrorCode.NONE, "protocol_type": args.protocol_type, "protocol_name": args.protocol_name,
            "assignment": assignment_bytes(member.assigned, classic.metadata, topics)}


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Whether a partition of its target that it does not have yet is still owned by another member."""
    owners = group.owners()
    target = group.target.get(member.member_id, {})
    return any(p not in member.assigned.get(t, set()) and owners.get((t, p), member.member_id) != member.member_id
               for t, ps in target.items() for p in ps)


def heartbeat(group: ConsumerGroup, args: Heartbeat, now_s: float) -> ErrorCode:
    """A Heartbeat to the consumer group: NONE, or REBALANCE_IN_PROGRESS when the member is to
    rejoin; KafkaError when refused."""
    member = _classic_member(group, args.member_id, args.group_instance_id)
    _check_generation(member, args.generation_id)
    assert member.classic is not None
    member.session_deadline = now_s + member.classic.session_timeout_ms / 1000
    if (member.member_epoch < group.group_epoch or member.state == MemberState.UNREVOKED_PARTITIONS
            or (member.state == MemberState.UNRELEASED_PARTITIONS and not _waiting_on_unreleased(group, member))):
        _told_to_rejoin(member, now_s)
        return ErrorCode.REBALANCE_IN_PROGRESS
    return ErrorCode.NONE


def leave(group: ConsumerGroup, leaving: list[dict[str, Any]], topics: TopicImage) -> list[dict[str, Any]]:
    """A LeaveGroup to the consumer group: one result per member named; the group epoch moves once."""
    results = []
    removed = False
    for x in leaving:
        member_id, instance_id = x["member_id"], x["group_instance_id"]
        try:
            if instance_id is None:
                member = group.members.get(member_id)
                if member is None:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
            else:
                held_by = group.static_members.get(instance_id)
                if held_by is None:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
                # An administrator removes a static member by its instance id alone.
                if member_id and member_id != held_by:
                    raise KafkaError(ErrorCode.FENCED_INSTANCE_ID)
                member = group.members[held_by]
            if member.classic is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
            group.remove_member(member.member_id, bump=False)
            removed = True
            results.append({"member_id": member.member_id, "group_instance_id": instance_id,
                            "error_code": ErrorCode.NONE})
        except KafkaError as e:
            results.append({"member_id": member_id, "group_instance_id": instance_id, "error_code": e.code})
    if removed:
        group.subscribed_metadata = group.subscription_metadata(topics)
        group.bump_epoch()
    return results
