"""The online migration of a group between the classic and the consumer protocol (KIP-848), under
``group.consumer.migration.policy``.

- **Upgrade**: the first member that joins a classic consumer group with ConsumerGroupHeartbeat
  turns it into a consumer-protocol group.  Each classic member becomes a member at the classic
  generation as its epoch, with the partitions of its last assignment as both its current and its
  target assignment, so nothing moves until the new member's arrival is assigned.
- **Downgrade**: when the last member that speaks the consumer protocol leaves (or is fenced) and
  only classic members remain, the group becomes a classic group again at the group epoch as its
  generation, each member keeping its target partitions as its assignment, and a rebalance starts.

Kafka's conditions are kept: the policy allows the direction; a group to upgrade embeds the consumer
protocol and is not larger than ``group.consumer.max.size``; a group to downgrade is not larger
than ``group.max.size``.  Plain state, no I/O: the group's actor decides, converts and writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pykafkad.coordinator.group.classic_members import assignment_bytes, ids_of
from pykafkad.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupConfig, TopicImage
from pykafkad.coordinator.group.consumer_member import ClassicMetadata, ConsumerMember, MemberState, copy_assignment
from pykafkad.coordinator.group.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    MalformedProtocol,
    decode_assignment,
    decode_subscription,
)
from pykafkad.coordinator.group.member import Member
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode


def upgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("upgrade", "bidirectional")


def downgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("downgrade", "bidirectional")


def consumer_group_from_classic(group_id: str, config: ConsumerGroupConfig, generation: int, protocol_name: str,
                                members: Iterable[Member], topics: TopicImage, now_s: float) -> ConsumerGroup:
    """The consumer-protocol group a classic group becomes; KafkaError (GROUP_ID_NOT_FOUND) when a
    member's embedded protocol is malformed, as Kafka refuses the upgrade then."""
    group = ConsumerGroup(group_id, config)
    group.group_epoch = group.assignment_epoch = generation
    for m in members:
        try:
            subscription = decode_subscription(m.metadata_for(protocol_name))
            assigned = ids_of(decode_assignment(m.assignment), topics)
        except MalformedProtocol as e:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                             f"Cannot upgrade the classic group {group_id} to consumer group because the embedded "
                             f"consumer protocol is malformed.") from e
        member = ConsumerMember(
            m.member_id, instance_id=m.group_instance_id, rack_id=subscription.rack_id, client_id=m.client_id,
            client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
            subscribed_topic_names=list(subscription.topics), member_epoch=generation,
            previous_member_epoch=generation, state=MemberState.STABLE, assigned=assigned,
            classic=ClassicMetadata(m.session_timeout_ms, tuple(m.protocols)),
            session_deadline=now_s + m.session_timeout_ms / 1000)
        group.members[m.member_id] = member
        if m.group_instance_id is not None:
            group.static_members[m.group_instance_id] = m.member_id
        group.target[m.member_id] = copy_assignment(assigned)
    return group


def classic_members_of(group: ConsumerGroup, leaving: str) -> list[Member]:
    """The classic members a consumer group keeps as it turns classic, without ``leaving`` (their
    assignments are set once the group's protocol is chosen: ``assign_targets``)."""
    out = []
    for m in group.members.values():
        if m.member_id == leaving or m.classic is None:
            continue
        member = Member(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                        m.classic.session_timeout_ms, CONSUMER_PROTOCOL_TYPE, list(m.classic.protocols))
        member.deadline = math.inf
        out.append(member)
    return out


def assign_targets(group: ConsumerGroup, members: Iterable[Member], protocol_name: str, topics: TopicImage) -> None:
    """Each member's target partitions as its classic assignment, in its subscription's version."""
    for m in members:
        m.assignment = assignment_bytes(group.target.get(m.member_id, {}), m.metadata_for(protocol_name), topics)
