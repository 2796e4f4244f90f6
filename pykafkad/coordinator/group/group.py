"""One group, run as a single actor task: a classic group (Kafka's group state machine), or a
consumer-protocol group (KIP-848: ``ConsumerGroup``, with classic members among its own while a
group migrates between the protocols).

The actor owns everything about its group (members, generation, protocol, committed offsets,
timers) and is the only code that touches it; requests arrive on a memory channel and each
carries a one-slot reply channel.  JoinGroup and SyncGroup replies are held until the
rebalance answers them.  Session timeouts, the rebalance (join) timeout, the initial
rebalance delay, the pending-sync timeout and offset expiry are deadlines kept here and
served by the same loop, so there is nothing to lock.

The semantics follow Kafka's classic group coordinator (GroupCoordinator / ClassicGroup):
states Empty, PreparingRebalance, CompletingRebalance, Stable and Dead; MEMBER_ID_REQUIRED
for v4+ joins (KIP-394); static membership (KIP-345); protocol selection by vote; generation
and member checks with ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS and
FENCED_INSTANCE_ID.
"""

from __future__ import annotations

import enum
import logging
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import trio

from pykafkad.coordinator.group import classic_members
from pykafkad.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupConfig, TopicImage
from pykafkad.coordinator.group.consumer_group_records import GROUP_METADATA, StoredConsumerGroup
from pykafkad.coordinator.group.consumer_member import LEAVE_EPOCH, new_member_id
from pykafkad.coordinator.group.consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscribed_topics
from pykafkad.coordinator.group.member import Member, reply
from pykafkad.coordinator.group.offsets_store import (
    OffsetAndMetadata,
    StoredGroup,
    StoredMember,
    group_key,
    group_value,
    offset_key,
    offset_value,
)
from pykafkad.coordinator.group.protocol_migration import (
    assign_targets,
    classic_members_of,
    consumer_group_from_classic,
    downgrade_enabled,
    upgrade_enabled,
)
from pykafkad.coordinator.group.requests import (
    CommitOffsets,
    CommitTransactionalOffsets,
    ConsumerHeartbeat,
    DeleteGroup,
    DeleteOffsets,
    DescribeConsumerGroup,
    DescribeGroup,
    DescribeShareGroup,
    FetchOffsets,
    GroupRequest,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    ListGroup,
    NewShareGroup,
    ShareGroupPartitions,
    ShareHeartbeat,
    ShareStateChanged,
    SyncGroup,
    TopicDeleted,
    TransactionEnded,
    Unload,
    consumer_heartbeat_error,
    join_error,
    sync_error,
)
from pykafkad.coordinator.group.share_group import SHARE_GROUP_TYPE, ShareGroup, ShareGroupConfig
from pykafkad.coordinator.group.share_group_records import GROUP_METADATA as SHARE_GROUP_METADATA
from pykafkad.coordinator.group.share_group_records import StoredShareGroup
from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode

log = logging.getLogger(__name__)

GROUP_METADATA_KEY_TYPE = GROUP_METADATA.to_bytes(2, "big")
SHARE_GROUP_METADATA_KEY_TYPE = SHARE_GROUP_METADATA.to_bytes(2, "big")
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000  # KIP-394: a new member that never completes its join is dropped

Reply = trio.MemorySendChannel[dict[str, Any]]


def _group_metadata_last(record: tuple[bytes, bytes | None]) -> bool:
    return record[0][:2] in (GROUP_METADATA_KEY_TYPE, SHARE_GROUP_METADATA_KEY_TYPE)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class GroupConfig:
    """The broker settings a group obeys."""

    min_session_timeout_ms: int
    max_session_timeout_ms: int
    initial_rebalance_delay_ms: int
    max_size: int
    offsets_retention_ms: int
    retention_check_interval_ms: int
    offset_metadata_max_bytes: int
    consumer: ConsumerGroupConfig
    # group.consumer.migration.policy: which online migrations between the protocols may happen.
    migration_policy: str = "bidirectional"
    share: ShareGroupConfig = ShareGroupConfig()


class GroupStore(TopicImage, Protocol):
    """Where a group's records go (``__consumer_offsets``), and the topics it may assign."""

    def write(self, group_id: str, records: list[tuple[bytes, bytes | None]],
              producer: tuple[int, int] | None = None) -> ErrorCode: ...

    def has_partition(self, topic: str, partition: int) -> bool: ...


class GroupActor:
    """The task that owns one group; ``send`` takes ``(request, reply)`` messages."""

    def __init__(self, group_id: str, config: GroupConfig, store: GroupStore,
                 on_exit: Callable[[GroupActor], None]) -> None:
        self.group_id = group_id
        self.config = config
        self.store = store
        self.on_exit = on_exit
        self.send, self._receive = trio.open_memory_channel[tuple[GroupRequest, Reply]](0)
        self.exists = False
        self.state = GroupState.EMPTY
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation = 0
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}
        self.pending_members: dict[str, float] = {}  # KIP-394: member id -> deadline
        self.pending_sync: set[str] = set()
        self.sync_deadline = math.inf
        self.join_deadline = math.inf
        self.join_initial = False
        self.initial_remaining_ms = 0
        self.new_member_added = False
        self.offsets: dict[tuple[str, int], OffsetAndMetadata] = {}
        # Transactional offsets awaiting their transaction's end: producer id -> offsets.
        self.pending_txn_offsets: dict[int, dict[tuple[str, int], OffsetAndMetadata]] = {}
        self.current_state_timestamp: int | None = None
        self.retention_deadline = math.inf
        # Set while the group speaks the consumer protocol (KIP-848); the classic fields are then unused.
        self.consumer: ConsumerGroup | None = None
        # Its consumer-protocol or share group records as last written to __consumer_offsets, by key
        # (``_store_group_records``).
        self._written: dict[bytes, bytes] = {}
        # Set while the group is a share group (KIP-932).
        self.share: ShareGroup | None = None

    # -- loading ---------------------------------------------------------------------------------

    def load(self, stored: StoredGroup | StoredConsumerGroup | StoredShareGroup | None,
             offsets: dict[tuple[str, int], OffsetAndMetadata],
             pending: dict[int, dict[tuple[str, int], OffsetAndMetadata]] | None = None) -> None:
        """Restore the group as ``__consumer_offsets`` last recorded it (before the actor runs)."""
        self.exists = True
        self.offsets = dict(offsets)
        self.pending_txn_offsets = {pid: dict(o) for pid, o in (pending or {}).items()}
        if stored is None:
            return
        if isinstance(stored, StoredShareGroup):
            self.share = ShareGroup.from_stored(self.group_id, self.config.share, stored, self.store,
                                                trio.current_time())
            self._written = self.share.records(self.store)
            self._transition(GroupState.EMPTY)
            return
        if isinstance(stored, StoredConsumerGroup):
            self.consumer = ConsumerGroup.from_stored(self.group_id, self.config.consumer, stored,
                                                      trio.current_time())
            self.consumer.restore_subscription_metadata(self.store)
            self._written = self.consumer.records()
            return
        self.protocol_type = stored.protocol_type or None
        self.generation = stored.generation
        self.protocol_name = stored.protocol
        self.leader_id = stored.leader
        self.current_state_timestamp = stored.current_state_timestamp if stored.current_state_timestamp >= 0 else None
        deadline_base = trio.current_time()
        for sm in stored.members:
            m = Member(sm.member_id, sm.group_instance_id, sm.client_id, sm.client_host, sm.rebalance_timeout_ms,
                       sm.session_timeout_ms, stored.protocol_type, [(stored.protocol or "", sm.subscription)],
                       assignment=sm.assignment)
            m.deadline = deadline_base + sm.session_timeout_ms / 1000
            self.members[m.member_id] = m
            if m.group_instance_id is not None:
                self.static_members[m.group_instance_id] = m.member_id
        self.state = GroupState.STABLE if self.members else GroupState.EMPTY
        if self.leader_id not in self.members:
            self.leader_id = next(iter(self.members), None)

    # -- the actor loop --------------------------------------------------------------------------

    async def run(self) -> None:
        handlers: dict[type[GroupRequest], Callable[[Any, Reply], None]] = {
            JoinGroup: self._join, SyncGroup: self._sync, Heartbeat: self._heartbeat, LeaveGroup: self._leave,
            CommitOffsets: self._commit, FetchOffsets: self._fetch, DescribeGroup: self._describe,
            ListGroup: self._list, DeleteGroup: self._delete, DeleteOffsets: self._offset_delete,
            TopicDeleted: self._topic_deleted, Unload: self._unload,
            CommitTransactionalOffsets: self._txn_commit, TransactionEnded: self._txn_marker,
            ConsumerHeartbeat: self._consumer_heartbeat, DescribeConsumerGroup: self._describe_consumer_group,
            ShareHeartbeat: self._share_heartbeat, DescribeShareGroup: self._describe_share_group,
            ShareGroupPartitions: self._share_group_partitions, ShareStateChanged: self._share_state_changed,
            NewShareGroup: self._new_share_group,
        }
        classic_only = (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
        self.retention_deadline = trio.current_time() + self.config.retention_check_interval_ms / 1000
        with self._receive:
            while True:
                item = None
                with trio.move_on_at(self._next_deadline()):
                    item = await self._receive.receive()
                if item is not None:
                    request, out = item
                    if isinstance(request, classic_only) and not self._classic_may_take(request, out):
                        continue
                    handlers[type(request)](request, out)
                self._fire_timers(trio.current_time())
                if not self.exists or self.state == GroupState.DEAD:
                    self.on_exit(self)
                    return

    def _next_deadline(self) -> float:
        candidates = [self.join_deadline, self.sync_deadline, self.retention_deadline]
        candidates += [m.deadline for m in self.members.values()]
        candidates += list(self.pending_members.values())
        if self.consumer is not None:
            candidates.append(self.consumer.next_deadline())
        if self.share is not None:
            candidates.append(self.share.next_deadline())
        return min(candidates)

    def _fire_timers(self, now: float) -> None:
        if self.join_deadline <= now:
            self._on_join_deadline(now)
        if self.sync_deadline <= now:
            self._on_sync_deadline()
        for member_id, deadline in list(self.pending_members.items()):
            if deadline <= now:
                log.info("group %s: pending member %s did not rejoin in time", self.group_id, member_id)
                del self.pending_members[member_id]
                self._try_complete_join()
        for m in list(self.members.values()):
            if m.member_id in self.members and m.deadline <= now:
                if (m.awaiting_join or m.awaiting_sync) and not m.is_new:
                    m.deadline = now + m.session_timeout_ms / 1000
                    continue
                log.info("group %s: member %s session expired", self.group_id, m.member_id)
                self._remove_member_and_update_group(m)
        if self.consumer is not None:
            expired = self.consumer.expired_members(now)
            for member_id, why in expired:
                if self.consumer is None:
                    break  # it turned classic: its members' sessions start again there
                log.info("group %s: member %s: %s; fenced", self.group_id, member_id, why)
                self._fence_consumer_member(member_id)
            if expired and self.consumer is not None and self._store_group_records() != ErrorCode.NONE:
                log.warning("group %s: members removed, but not yet in %s", self.group_id, "__consumer_offsets")
        if self.share is not None:
            gone = self.share.expired_members(now)
            for member_id in gone:
                log.info("group %s: share member %s: session expired; fenced", self.group_id, member_id)
                self.share.remove_member(member_id)
            if gone and self._store_group_records() != ErrorCode.NONE:
                log.warning("group %s: members removed, but not yet in %s", self.group_id, "__consumer_offsets")
        if self.retention_deadline <= now:
            self.retention_deadline = now + self.config.retention_check_interval_ms / 1000
            self._expire_offsets()

    # -- helpers ---------------------------------------------------------------------------------

    def _transition(self, state: GroupState) -> None:
        self.state = state
        self.current_state_timestamp = now_ms()

    def _rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def _schedule_heartbeat(self, m: Member, timeout_ms: int | None = None) -> None:
        m.deadline = trio.current_time() + (timeout_ms if timeout_ms is not None else m.session_timeout_ms) / 1000

    def _validate_member(self, member_id: str, instance_id: str | None) -> ErrorCode | None:
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is not None and existing != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    def _supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        if not self.members:
            return bool(protocol_type) and bool(protocols)
        return protocol_type == self.protocol_type and any(
            name in self._candidate_protocols() for name, _ in protocols)

    def _candidate_protocols(self) -> set[str]:
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def _select_protocol(self) -> str:
        candidates = self._candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = next(name for name, _ in m.protocols if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        return next(name for name, count in votes.items() if count == best)

    def _accept_joining_member(self, member_id: str) -> bool:
        limit = self.config.max_size
        if self.state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        if self.state == GroupState.PREPARING_REBALANCE:
            known = self.members.get(member_id)
            if known is not None and known.awaiting_join:
                return True
            return sum(1 for m in self.members.values() if m.awaiting_join) < limit
        return member_id in self.members or len(self.members) < limit

    def _stored_group(self) -> StoredGroup:
        return StoredGroup(
            protocol_type=self.protocol_type or "",
            generation=self.generation,
            protocol=self.protocol_name,
            leader=self.leader_id,
            current_state_timestamp=self.current_state_timestamp if self.current_state_timestamp else now_ms(),
            members=[StoredMember(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                  m.rebalance_timeout_ms, m.session_timeout_ms,
                                  m.metadata_for(self.protocol_name), m.assignment)
                     for m in self.members.values()],
        )

    def _store_group(self) -> ErrorCode:
        return self.store.write(self.group_id, [(group_key(self.group_id), group_value(self._stored_group()))])

    def _join_result(self, m: Member, with_members: bool, leader: str | None = None,
                     skip_assignment: bool = False) -> dict[str, Any]:
        members = []
        if with_members:
            members = [{"member_id": x.member_id, "group_instance_id": x.group_instance_id,
                        "metadata": x.metadata_for(self.protocol_name)} for x in self.members.values()]
        return {"error_code": ErrorCode.NONE, "generation_id": self.generation, "protocol_type": self.protocol_type,
                "protocol_name": self.protocol_name, "leader": leader if leader is not None else self.leader_id or "",
                "skip_assignment": skip_assignment, "member_id": m.member_id, "members": members}

    # -- membership changes ----------------------------------------------------------------------

    def _add_member_and_rebalance(self, member_id: str, args: JoinGroup, out: Reply) -> None:
        m = Member(member_id, args.group_instance_id, args.client_id, args.client_host,
                   args.rebalance_timeout_ms, args.session_timeout_ms, args.protocol_type,
                   args.protocols, join_reply=out, is_new=True)
        if self.state == GroupState.PREPARING_REBALANCE and self.generation == 0:
            self.new_member_added = True
        if not self.members:
            self.protocol_type = m.protocol_type
        self.members[member_id] = m
        if m.group_instance_id is not None:
            self.static_members[m.group_instance_id] = member_id
        if self.leader_id is None:
            self.leader_id = member_id
        self.pending_members.pop(member_id, None)
        self._schedule_heartbeat(m, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(f"adding new member {member_id}")

    def _update_member_and_rebalance(self, m: Member, args: JoinGroup, out: Reply) -> None:
        m.protocols = args.protocols
        m.rebalance_timeout_ms = args.rebalance_timeout_ms
        m.session_timeout_ms = args.session_timeout_ms
        if m.join_reply is not None and m.join_reply is not out:
            reply(m.join_reply, join_error(ErrorCode.REBALANCE_IN_PROGRESS, m.member_id))
        m.join_reply = out
        self._maybe_prepare_rebalance(f"updating metadata for member {m.member_id}")

    def _update_static_member_and_rebalance(self, new_id: str, args: JoinGroup, out: Reply) -> None:
        instance_id = args.group_instance_id
        old_id = self.static_members[instance_id]
        old = self.members.pop(old_id)
        current_leader = self.leader_id
        reply(old.join_reply, join_error(ErrorCode.FENCED_INSTANCE_ID, old_id))
        reply(old.sync_reply, sync_error(ErrorCode.FENCED_INSTANCE_ID))
        old.join_reply = old.sync_reply = None
        old.member_id = new_id
        self.members[new_id] = old
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        m = old
        old_protocols = m.protocols
        m.client_id, m.client_host = args.client_id, args.client_host
        m.protocols = args.protocols
        m.rebalance_timeout_ms = args.rebalance_timeout_ms
        m.session_timeout_ms = args.session_timeout_ms
        m.join_reply = out
        self._schedule_heartbeat(m)
        log.info("group %s: static member %s rejoined as %s", self.group_id, instance_id, new_id)
        if self.state == GroupState.STABLE:
            if self.protocol_name == self._select_protocol():
                error = self._store_group()
                if error != ErrorCode.NONE:
                    # Put the old member id back, as Kafka reverts a failed static-member store.
                    m.protocols = old_protocols
                    self.members[old_id] = self.members.pop(new_id)
                    m.member_id = old_id
                    self.static_members[instance_id] = old_id
                    if self.leader_id == new_id:
                        self.leader_id = old_id
                    m.join_reply = None
                    reply(out, join_error(error))
                    return
                is_leader = self.leader_id == new_id
                if args.version >= 9 and is_leader:
                    # KIP-814: the leader learns its new id and the members' metadata, but keeps the assignment.
                    reply(out, self._join_result(m, with_members=True, skip_assignment=True))
                else:
                    # The rejoining leader must not think it leads (a stable group would not broadcast a
                    # new assignment), so the old leader id is returned.
                    reply(out, self._join_result(m, with_members=False, leader=current_leader or ""))
                m.join_reply = None
            else:
                self._maybe_prepare_rebalance(f"static member {instance_id} rejoined with a protocol change")
        elif self.state == GroupState.COMPLETING_REBALANCE:
            self._maybe_prepare_rebalance(f"updating metadata for static member {instance_id}")

    def _remove_member(self, m: Member) -> None:
        self.members.pop(m.member_id, None)
        if m.group_instance_id is not None and self.static_members.get(m.group_instance_id) == m.member_id:
            del self.static_members[m.group_instance_id]
        self.pending_sync.discard(m.member_id)
        if self.leader_id == m.member_id:
            self.leader_id = next(iter(self.members), None)

    def _remove_member_and_update_group(self, m: Member) -> None:
        reply(m.join_reply, join_error(ErrorCode.UNKNOWN_MEMBER_ID, m.member_id))
        reply(m.sync_reply, sync_error(ErrorCode.UNKNOWN_MEMBER_ID))
        m.join_reply = m.sync_reply = None
        self._remove_member(m)
        if self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(f"removing member {m.member_id}")
        elif self.state == GroupState.PREPARING_REBALANCE:
            self._try_complete_join()

    # -- rebalance -------------------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, reason: str) -> None:
        if self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY):
            self._prepare_rebalance(reason)
        if self.state == GroupState.PREPARING_REBALANCE:
            self._try_complete_join()

    def _prepare_rebalance(self, reason: str) -> None:
        if self.state == GroupState.COMPLETING_REBALANCE:
            self._reset_and_propagate_assignment_error(ErrorCode.REBALANCE_IN_PROGRESS)
        self.pending_sync.clear()
        self.sync_deadline = math.inf
        rebalance_ms = self._rebalance_timeout_ms()
        now = trio.current_time()
        if self.state == GroupState.EMPTY:
            delay = self.config.initial_rebalance_delay_ms
            self.join_initial = True
            self.initial_remaining_ms = max(rebalance_ms - delay, 0)
            self.join_deadline = now + min(delay, rebalance_ms) / 1000
        else:
            self.join_initial = False
            self.join_deadline = now + rebalance_ms / 1000
        log.info("group %s: preparing to rebalance (generation %d): %s", self.group_id, self.generation, reason)
        self._transition(GroupState.PREPARING_REBALANCE)

    def _reset_and_propagate_assignment_error(self, error: ErrorCode) -> None:
        for m in self.members.values():
            m.assignment = b""
            reply(m.sync_reply, sync_error(error))
            m.sync_reply = None

    def _try_complete_join(self) -> None:
        if self.state != GroupState.PREPARING_REBALANCE or self.join_initial:
            return
        if all(m.awaiting_join for m in self.members.values()) and not self.pending_members:
            self._complete_join()

    def _on_join_deadline(self, now: float) -> None:
        if self.state != GroupState.PREPARING_REBALANCE:
            self.join_deadline = math.inf
            return
        if self.join_initial and self.new_member_added and self.initial_remaining_ms > 0:
            delay = self.config.initial_rebalance_delay_ms
            self.new_member_added = False
            self.join_deadline = now + min(delay, self.initial_remaining_ms) / 1000
            self.initial_remaining_ms = max(self.initial_remaining_ms - delay, 0)
            return
        self._complete_join()

    def _complete_join(self) -> None:
        self.join_deadline = math.inf
        self.join_initial = False
        self.new_member_added = False
        for m in list(self.members.values()):
            if not m.awaiting_join and not m.is_static:
                log.info("group %s: member %s did not rejoin; removed", self.group_id, m.member_id)
                self._remove_member(m)
        if self.state == GroupState.DEAD:
            return
        if not self._elect_joined_leader() and self.members:
            # Only static members that have not rejoined are left: wait for them a rebalance timeout more.
            self.join_deadline = trio.current_time() + self._rebalance_timeout_ms() / 1000
            return
        self.generation += 1
        if self.members:
            self.protocol_name = self._select_protocol()
            self._transition(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self._transition(GroupState.EMPTY)
        log.info("group %s: generation %d with %d member(s), protocol %s", self.group_id, self.generation,
                 len(self.members), self.protocol_name)
        if self.state == GroupState.EMPTY:
            self._store_group()
            return
        for m in self.members.values():
            if m.join_reply is not None:
                reply(m.join_reply, self._join_result(m, with_members=m.member_id == self.leader_id))
                m.join_reply = None
            self._schedule_heartbeat(m)
            m.is_new = False
            self.pending_sync.add(m.member_id)
        self.sync_deadline = trio.current_time() + self._rebalance_timeout_ms() / 1000

    def _elect_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join:
            return True
        joined = next((m for m in self.members.values() if m.awaiting_join), None)
        if joined is None:
            return False
        self.leader_id = joined.member_id
        return True

    def _on_sync_deadline(self) -> None:
        self.sync_deadline = math.inf
        if self.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not self.pending_sync:
            return
        for member_id in list(self.pending_sync):
            m = self.members.get(member_id)
            if m is not None:
                log.info("group %s: member %s did not sync in time; removed", self.group_id, member_id)
                reply(m.sync_reply, sync_error(ErrorCode.UNKNOWN_MEMBER_ID))
                m.sync_reply = None
                self._remove_member(m)
        self.pending_sync.clear()
        self._maybe_prepare_rebalance("members failed to sync within the rebalance timeout")

    # -- JoinGroup -------------------------------------------------------------------------------

    def _join(self, args: JoinGroup, out: Reply) -> None:
        member_id = args.member_id
        if not self.exists:
            if member_id:
                reply(out, join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
                return
            self.exists = True
            self._transition(GroupState.EMPTY)
        if self.state == GroupState.DEAD:
            reply(out, join_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id))
            return
        if not self._accept_joining_member(member_id):
            known = self.members.get(member_id)
            if known is not None:
                self._remove_member_and_update_group(known)
            reply(out, join_error(ErrorCode.GROUP_MAX_SIZE_REACHED, ""))
            return
        if not self._supports_protocols(args.protocol_type, args.protocols):
            reply(out, join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        if not member_id:
            self._new_member_join(args, out)
        else:
            self._current_member_join(args, out)
        self._try_complete_join()

    def _new_member_join(self, args: JoinGroup, out: Reply) -> None:
        instance_id = args.group_instance_id
        new_id = f"{instance_id if instance_id is not None else args.client_id}-{uuid.uuid4()}"
        if instance_id is not None:
            if instance_id in self.static_members:
                self._update_static_member_and_rebalance(new_id, args, out)
            else:
                self._add_member_and_rebalance(new_id, args, out)
        elif args.version >= 4:
            self.pending_members[new_id] = trio.current_time() + args.session_timeout_ms / 1000
            reply(out, join_error(ErrorCode.MEMBER_ID_REQUIRED, new_id))
        else:
            self._add_member_and_rebalance(new_id, args, out)

    def _current_member_join(self, args: JoinGroup, out: Reply) -> None:
        member_id = args.member_id
        if member_id in self.pending_members:
            self._add_member_and_rebalance(member_id, args, out)
            return
        error = self._validate_member(member_id, args.group_instance_id)
        if error is not None:
            reply(out, join_error(error, member_id))
            return
        m = self.members[member_id]
        if self.state == GroupState.PREPARING_REBALANCE:
            self._update_member_and_rebalance(m, args, out)
        elif self.state == GroupState.COMPLETING_REBALANCE:
            if m.matches(args.protocols):
                # It missed the JoinGroup answer of this generation: give it again.
                self._schedule_heartbeat(m)
                reply(out, self._join_result(m, with_members=member_id == self.leader_id))
            else:
                self._update_member_and_rebalance(m, args, out)
        elif self.state == GroupState.STABLE:
            if member_id == self.leader_id or not m.matches(args.protocols):
                self._update_member_and_rebalance(m, args, out)
            else:
                self._schedule_heartbeat(m)
                reply(out, self._join_result(m, with_members=False))
        else:
            reply(out, join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))

    # -- SyncGroup -------------------------------------------------------------------------------

    def _sync(self, args: SyncGroup, out: Reply) -> None:
        if not self.exists:
            reply(out, sync_error(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        if self.state == GroupState.DEAD:
            reply(out, sync_error(ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        member_id = args.member_id
        error = self._validate_member(member_id, args.group_instance_id)
        if error is not None:
            reply(out, sync_error(error))
            return
        if args.generation_id != self.generation:
            reply(out, sync_error(ErrorCode.ILLEGAL_GENERATION))
            return
        if ((args.protocol_type is not None and args.protocol_type != self.protocol_type)
                or (args.protocol_name is not None and args.protocol_name != self.protocol_name)):
            reply(out, sync_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        m = self.members[member_id]
        if self.state == GroupState.EMPTY:
            reply(out, sync_error(ErrorCode.UNKNOWN_MEMBER_ID))
        elif self.state == GroupState.PREPARING_REBALANCE:
            reply(out, sync_error(ErrorCode.REBALANCE_IN_PROGRESS))
        elif self.state == GroupState.COMPLETING_REBALANCE:
            if m.sync_reply is not None:
                reply(m.sync_reply, sync_error(ErrorCode.REBALANCE_IN_PROGRESS))
            m.sync_reply = out
            self.pending_sync.discard(member_id)
            self._schedule_heartbeat(m)
            if member_id == self.leader_id:
                assignments = {a["member_id"]: a["assignment"] for a in args.assignments}
                for x in self.members.values():
                    x.assignment = assignments.get(x.member_id, b"")
                error = self._store_group()
                if error != ErrorCode.NONE:
                    self._reset_and_propagate_assignment_error(error)
                    self._maybe_prepare_rebalance("storing the group's assignment failed")
                    return
                for x in self.members.values():
                    if x.sync_reply is not None:
                        reply(x.sync_reply, self._sync_result(x))
                        x.sync_reply = None
                self._transition(GroupState.STABLE)
        else:  # Stable
            self.pending_sync.discard(member_id)
            self._schedule_heartbeat(m)
            reply(out, self._sync_result(m))

    def _sync_result(self, m: Member) -> dict[str, Any]:
        return {"error_code": ErrorCode.NONE, "protocol_type": self.protocol_type,
                "protocol_name": self.protocol_name, "assignment": m.assignment}

    # -- Heartbeat, LeaveGroup -------------------------------------------------------------------

    def _heartbeat(self, args: Heartbeat, out: Reply) -> None:
        error = self._heartbeat_error(args)
        reply(out, {"error_code": error})

    def _heartbeat_error(self, args: Heartbeat) -> ErrorCode:
        if not self.exists:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if self.state == GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self._validate_member(args.member_id, args.group_instance_id)
        if error is not None:
            return error
        if args.generation_id != self.generation:
            return ErrorCode.ILLEGAL_GENERATION
        m = self.members[args.member_id]
        if self.state == GroupState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self._schedule_heartbeat(m)
        if self.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def _leave(self, args: LeaveGroup, out: Reply) -> None:
        leaving = args.members
        if not self.exists:
            reply(out, {"error_code": ErrorCode.NONE, "members": [
                {"member_id": x["member_id"], "group_instance_id": x["group_instance_id"],
                 "error_code": ErrorCode.UNKNOWN_MEMBER_ID} for x in leaving]})
            return
        if self.state == GroupState.DEAD:
            reply(out, {"error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "members": []})
            return
        results = []
        for x in leaving:
            results.append({"member_id": x["member_id"], "group_instance_id": x["group_instance_id"],
                            "error_code": self._leave_one(x["member_id"], x["group_instance_id"])})
        reply(out, {"error_code": ErrorCode.NONE, "members": results})

    def _leave_one(self, member_id: str, instance_id: str | None) -> ErrorCode:
        if not member_id and instance_id is not None:
            found = self.static_members.get(instance_id)
            if found is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            member_id = found
        elif member_id in self.pending_members:
            del self.pending_members[member_id]
            self._try_complete_join()
            return ErrorCode.NONE
        else:
            error = self._validate_member(member_id, instance_id)
            if error is not None:
                return error
        log.info("group %s: member %s left", self.group_id, member_id)
        self._remove_member_and_update_group(self.members[member_id])
        return ErrorCode.NONE

    # -- the consumer protocol (KIP-848) ------------------------------------------------------------

    def _classic_may_take(self, request: GroupRequest, out: Reply) -> bool:
        """A classic request to a group that speaks the consumer protocol: an empty one goes back to
        the classic protocol on JoinGroup; otherwise the consumer group answers it, holding the
        classic member among its own (``classic_members``)."""
        if self.share is not None:
            # A share group speaks neither classic nor consumer protocol.
            code = (ErrorCode.INCONSISTENT_GROUP_PROTOCOL if isinstance(request, JoinGroup)
                    else ErrorCode.UNKNOWN_MEMBER_ID)
            reply(out, request.error_reply(self.group_id, code))
            return False
        consumer = self.consumer
        if consumer is None:
            return True
        if isinstance(request, JoinGroup) and not consumer.members:
            log.info("group %s: empty consumer group converted to a classic group", self.group_id)
            self.consumer = None
            error = self._store_group_records()
            if error != ErrorCode.NONE:
                reply(out, join_error(error, request.member_id))
                return False
            return True
        now = trio.current_time()
        response: dict[str, Any]
        replaced = None
        if isinstance(request, JoinGroup) and not request.member_id and request.group_instance_id is not None:
            held_by = consumer.static_members.get(request.group_instance_id)
            if held_by is not None and consumer.only_classic_members_except(held_by):
                replaced = held_by
        try:
            if isinstance(request, JoinGroup):
                response = classic_members.join(consumer, request, new_member_id, now, self.store)
                if replaced is not None and response["error_code"] == ErrorCode.NONE \
                        and self._may_downgrade(replaced=True):
                    # The last consumer-protocol member was a static member, and a classic one took
                    # its instance id: only classic members are left.
                    self._downgrade(None)
            elif isinstance(request, SyncGroup):
                response = classic_members.sync(consumer, request, now, self.store)
            elif isinstance(request, Heartbeat):
                response = {"error_code": classic_members.heartbeat(consumer, request, now)}
            else:
                assert isinstance(request, LeaveGroup)
                response = {"error_code": ErrorCode.NONE,
                            "members": classic_members.leave(consumer, request.members, self.store)}
        except KafkaError as e:
            if e.message:
                log.info("group %s: %s refused: %s", self.group_id, type(request).__name__, e.message)
            reply(out, request.error_reply(self.group_id, e.code))
            return False
        # (A downgrade wrote the group's records itself.)
        error = self._store_group_records() if self.consumer is not None else ErrorCode.NONE
        if error != ErrorCode.NONE:
            reply(out, request.error_reply(self.group_id, error))
            return False
        reply(out, response)
        return False

    def _may_upgrade(self) -> bool:
        """Whether this classic group, with members, may become a consumer group as a member joins it
        with ConsumerGroupHeartbeat (Kafka's ``validateOnlineUpgrade``)."""
        if not upgrade_enabled(self.config.migration_policy):
            log.info("group %s: not upgraded to a consumer group: the online upgrade is disabled", self.group_id)
            return False
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            log.info("group %s: not upgraded to a consumer group: it does not use the consumer embedded protocol",
                     self.group_id)
            return False
        if len(self.members) > self.config.consumer.max_size:
            log.info("group %s: not upgraded to a consumer group: it has more members than group.consumer.max.size",
                     self.group_id)
            return False
        return True

    def _end_classic(self) -> None:
        """The classic group's state is over (it became a consumer group): what it held is answered
        with REBALANCE_IN_PROGRESS, so those members join again."""
        for m in self.members.values():
            reply(m.join_reply, join_error(ErrorCode.REBALANCE_IN_PROGRESS, m.member_id))
            reply(m.sync_reply, sync_error(ErrorCode.REBALANCE_IN_PROGRESS))
        self.members = {}
        self.static_members = {}
        self.pending_members = {}
        self.pending_sync = set()
        self.join_deadline = self.sync_deadline = math.inf
        self.join_initial = False
        self.protocol_type = self.protocol_name = self.leader_id = None
        self.generation = 0
        self._transition(GroupState.EMPTY)

    def _fence_consumer_member(self, member_id: str) -> None:
        """A member of the consumer group leaves or is fenced: when only classic members remain, the
        group may turn back into a classic group (Kafka's online downgrade); else it is removed."""
        assert self.consumer is not None
        if self.consumer.only_classic_members_except(member_id) and self._may_downgrade():
            self._downgrade(member_id)
        else:
            self.consumer.remove_member(member_id)

    def _may_downgrade(self, replaced: bool = False) -> bool:
        """Whether the group may turn classic as its last consumer-protocol member goes (``replaced``:
        by a classic static member taking its instance id, which keeps the group's size)."""
        assert self.consumer is not None
        if not downgrade_enabled(self.config.migration_policy):
            log.info("group %s: not downgraded to a classic group: the online downgrade is disabled", self.group_id)
            return False
        if len(self.consumer.members) - (0 if replaced else 1) > self.config.max_size:
            log.info("group %s: not downgraded to a classic group: it has more members than group.max.size",
                     self.group_id)
            return False
        return True

    def _downgrade(self, leaving: str | None) -> None:
        """The consumer group becomes a classic group without ``leaving``: at its epoch as the
        generation, each member with its target partitions, and a rebalance begins (none when a
        classic static member replaced the last consumer-protocol one: ``leaving`` None)."""
        consumer = self.consumer
        assert consumer is not None
        members = classic_members_of(consumer, leaving or "")
        self.members = {m.member_id: m for m in members}
        self.static_members = {m.group_instance_id: m.member_id for m in members if m.group_instance_id is not None}
        self.protocol_type = CONSUMER_PROTOCOL_TYPE
        self.generation = consumer.group_epoch
        self.protocol_name = self._select_protocol()
        self.leader_id = members[0].member_id
        assign_targets(consumer, members, self.protocol_name, self.store)
        self.consumer = None
        self._transition(GroupState.STABLE)
        for m in members:
            self._schedule_heartbeat(m)
        error = self._store_group_records(after=[(group_key(self.group_id), group_value(self._stored_group()))])
        if error != ErrorCode.NONE:
            log.warning("group %s: downgraded, but not yet in %s: %s", self.group_id, "__consumer_offsets", error.name)
        log.info("group %s: downgraded from a consumer group to a classic group at generation %d with %d member(s)",
                 self.group_id, self.generation, len(members))
        if leaving is not None:
            self._prepare_rebalance(f"Downgrade group {self.group_id} from consumer to classic.")

    def _consumer_heartbeat(self, args: ConsumerHeartbeat, out: Reply) -> None:
        fields = args.fields
        joining = fields.member_epoch == 0
        now = trio.current_time()
        # A classic group's record, tombstoned when the group turns into a consumer group.
        converted: list[tuple[bytes, bytes | None]] = []
        group = self.consumer
        upgrading = False
        if self.share is not None:
            message = f"Group {self.group_id} is not a consumer group."
            reply(out, consumer_heartbeat_error(ErrorCode.GROUP_ID_NOT_FOUND, message))
            return
        if group is None:
            classic = self.exists and self.state != GroupState.DEAD
            upgrading = classic and bool(self.members) and joining and self._may_upgrade()
            if classic and (self.members or not joining) and not upgrading:
                message = f"Group {self.group_id} is not a consumer group."
                reply(out, consumer_heartbeat_error(ErrorCode.GROUP_ID_NOT_FOUND, message))
                return
            if not joining:
                message = f"Consumer group {self.group_id} not found."
                reply(out, consumer_heartbeat_error(ErrorCode.GROUP_ID_NOT_FOUND, message))
                return
            try:
                # The conversion counts only once the heartbeat is taken: until then the group stays classic.
                group = (consumer_group_from_classic(self.group_id, self.config.consumer, self.generation,
                                                     self.protocol_name or "", self.members.values(), self.store, now)
                         if upgrading else ConsumerGroup(self.group_id, self.config.consumer))
            except KafkaError as e:
                reply(out, consumer_heartbeat_error(e.code, e.message))
                return
            if classic:
                converted.append((group_key(self.group_id), None))
        elif (fields.member_epoch == LEAVE_EPOCH and fields.member_id in group.members
              and group.only_classic_members_except(fields.member_id) and self._may_downgrade()):
            self._downgrade(fields.member_id)
            reply(out, {"error_code": ErrorCode.NONE, "error_message": None, "member_id": fields.member_id,
                        "member_epoch": LEAVE_EPOCH, "heartbeat_interval_ms": 0, "assignment": None})
            return
        before = (group.group_epoch, group.state)
        try:
            response = group.heartbeat(fields, now, self.store)
        except KafkaError as e:
            reply(out, consumer_heartbeat_error(e.code, e.message))
            return
        if group is not self.consumer:
            if upgrading:
                log.info("group %s: upgraded from a classic group at generation %d to a consumer group",
                         self.group_id, self.generation)
                self._end_classic()
            elif converted:
                log.info("group %s: empty classic group converted to a consumer group", self.group_id)
            self.consumer = group
            self.exists = True
            self._transition(GroupState.EMPTY)
        error = self._store_group_records(converted)
        if error != ErrorCode.NONE:
            reply(out, consumer_heartbeat_error(error))
            return
        if (group.group_epoch, group.state) != before:
            log.info("group %s: epoch %d, assignment epoch %d, %s", self.group_id, group.group_epoch,
                     group.assignment_epoch, group.state)
        reply(out, response)

    def _store_group_records(self, before: list[tuple[bytes, bytes | None]] | None = None,
                        after: list[tuple[bytes, bytes | None]] | None = None) -> ErrorCode:
        """Write the consumer group's records that changed since the last write, and tombstones for
        those that are gone (all of them once the group is no longer a consumer group), between
        ``before`` and ``after``; an answer that depends on them waits until they are replicated
        (``GroupCoordinator.call``)."""
        if self.consumer is not None:
            now = self.consumer.records()
        else:
            now = self.share.records(self.store) if self.share is not None else {}
        records = list(before or [])
        # The group metadata's tombstone goes last: replaying it ends the group.
        records += sorted(((k, None) for k in self._written if k not in now), key=_group_metadata_last)
        records += [(k, v) for k, v in now.items() if self._written.get(k) != v]
        records += after or []
        if not records:
            return ErrorCode.NONE
        error = self.store.write(self.group_id, records)
        if error == ErrorCode.NONE:
            self._written = now
        return error

    def _share_heartbeat(self, args: ShareHeartbeat, out: Reply) -> None:
        fields = args.fields
        share = self.share
        found = self.exists and self.state != GroupState.DEAD
        other_type = found and share is None and (self.consumer is not None or bool(self.members))
        if other_type:
            message = f"Group {self.group_id} is not a share group."
            reply(out, consumer_heartbeat_error(ErrorCode.GROUP_ID_NOT_FOUND, message))
            return
        if share is None and fields.member_epoch != 0:
            message = (f"Group {self.group_id} not found." if fields.member_epoch < 0
                       else f"Share group {self.group_id} not found.")
            reply(out, consumer_heartbeat_error(ErrorCode.GROUP_ID_NOT_FOUND, message))
            return
        group = share if share is not None else ShareGroup(self.group_id, self.config.share)
        try:
            response = group.heartbeat(fields, trio.current_time(), self.store, args.heartbeat_interval_ms)
        except KafkaError as e:
            reply(out, consumer_heartbeat_error(e.code, e.message))
            return
        if share is None:
            log.info("group %s: a new share group", self.group_id)
            self.share = group
            self.exists = True
            self._transition(GroupState.EMPTY)
        # A subscribed partition counts as initialized once a heartbeat has asked for it (its leader
        # writes its share state on the group's first fetch), so (as in Kafka) a member's first
        # assignment is empty and the next heartbeat brings its partitions.
        group.initialized_now(group.to_initialize())
        error = self._store_group_records()
        if error != ErrorCode.NONE:
            reply(out, consumer_heartbeat_error(error))
            return
        reply(out, response)

    def _not_a_share_group(self, args: GroupRequest, out: Reply) -> None:
        """GROUP_ID_NOT_FOUND with Kafka's message: no such group, or one of another type."""
        found = self.exists and self.state != GroupState.DEAD
        message = f"Group {self.group_id} is not a share group." if found else f"Group {self.group_id} not found."
        reply(out, {**args.error_reply(self.group_id, ErrorCode.GROUP_ID_NOT_FOUND), "error_message": message,
                    "no_group": not found})

    def _share_group_partitions(self, args: ShareGroupPartitions, out: Reply) -> None:
        if self.share is None:
            self._not_a_share_group(args, out)
            return
        reply(out, {"error_code": ErrorCode.NONE, "error_message": None,
                    "initialized": {t: sorted(ps) for t, ps in self.share.initialized.items() if ps},
                    "group_epoch": self.share.group_epoch, "empty": not self.share.members})

    def _new_share_group(self, args: NewShareGroup, out: Reply) -> None:
        found = self.exists and self.state != GroupState.DEAD
        if self.share is None and not found:
            log.info("group %s: a new share group (its offsets set)", self.group_id)
            self.share = ShareGroup(self.group_id, self.config.share)
            self.exists = True
            self._transition(GroupState.EMPTY)
            error = self._store_group_records()
            if error != ErrorCode.NONE:
                self.share = None
                self.exists = False
                reply(out, args.error_reply(self.group_id, error))
                return
        self._share_group_partitions(args, out)

    def _share_state_changed(self, args: ShareStateChanged, out: Reply) -> None:
        if self.share is None:
            self._not_a_share_group(args, out)
            return
        self.share.initialized_now(dict(args.initialized))
        self.share.state_deleted(dict(args.deleted))
        reply(out, {"error_code": self._store_group_records(), "error_message": None})

    def _describe_share_group(self, args: DescribeShareGroup, out: Reply) -> None:
        if self.share is None:
            self._not_a_share_group(args, out)
            return
        reply(out, self.share.describe(self.store))

    def _describe_consumer_group(self, args: DescribeConsumerGroup, out: Reply) -> None:
        if self.consumer is None:
            found = self.exists and self.state != GroupState.DEAD
            message = (f"Group {self.group_id} is not a consumer group." if found
                       else f"Group {self.group_id} not found.")
            reply(out, {**args.error_reply(self.group_id, ErrorCode.GROUP_ID_NOT_FOUND), "error_message": message})
            return
        reply(out, self.consumer.describe(self.store))

    # -- offsets ---------------------------------------------------------------------------------

    def _commit_error(self, args: CommitOffsets) -> ErrorCode | None:
        generation = args.generation_id
        member_id = args.member_id
        instance_id = args.group_instance_id
        if not self.exists:
            if generation < 0:
                self.exists = True
                self._transition(GroupState.EMPTY)
                return None
            return ErrorCode.GROUP_ID_NOT_FOUND if args.version >= 9 else ErrorCode.ILLEGAL_GENERATION
        if self.state == GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if self.consumer is not None:
            return self.consumer.commit_error(member_id, generation, version=args.version)
        if generation < 0 and self.state == GroupState.EMPTY:
            return None
        if generation >= 0 or member_id or instance_id is not None:
            error = self._validate_member(member_id, instance_id)
            if error is not None:
                return error
            if generation != self.generation:
                return ErrorCode.ILLEGAL_GENERATION
        elif self.state != GroupState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if self.state == GroupState.COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return None

    def _stage_offsets(self, args: CommitOffsets, error: ErrorCode | None) -> tuple[
            dict[tuple[str, int], ErrorCode], list[tuple[bytes, bytes | None]],
            dict[tuple[str, int], OffsetAndMetadata]]:
        """A commit's offsets checked: the refused ones' errors, and the records and offsets to write."""
        results: dict[tuple[str, int], ErrorCode] = {}
        records: list[tuple[bytes, bytes | None]] = []
        staged: dict[tuple[str, int], OffsetAndMetadata] = {}
        ts = now_ms()
        for topic in args.topics:
            for p in topic["partitions"]:
                tp = (topic["name"], p["partition_index"])
                metadata = p["committed_metadata"] or ""
                if error is not None:
                    results[tp] = error
                elif not self.store.has_partition(*tp):
                    # Deleted while this commit waited its turn: the deletion already removed the
                    # topic's offsets from this group, and a commit now must not bring them back.
                    results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif len(metadata.encode()) > self.config.offset_metadata_max_bytes:
                    results[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                else:
                    o = OffsetAndMetadata(p["committed_offset"], p["committed_leader_epoch"], metadata, ts)
                    staged[tp] = o
                    records.append((offset_key(self.group_id, tp[0], tp[1]), offset_value(o)))
        return results, records, staged

    def _commit(self, args: CommitOffsets, out: Reply) -> None:
        error = self._commit_error(args)
        results, records, staged = self._stage_offsets(args, error)
        if records:
            write_error = self.store.write(self.group_id, records)
            for tp, o in staged.items():
                results[tp] = write_error
                if write_error == ErrorCode.NONE:
                    self.offsets[tp] = o
            if error is None and self.members:
                m = self.members.get(args.member_id)
                if m is not None:
                    self._schedule_heartbeat(m)
        reply(out, {"results": results})

    def _txn_commit(self, args: CommitTransactionalOffsets, out: Reply) -> None:
        """TxnOffsetCommit: the offsets are written in the producer's transaction and count once its
        COMMIT marker reaches this partition (``_txn_marker``)."""
        error = None
        if self.consumer is not None:
            error = self.consumer.commit_error(args.member_id, args.generation_id, transactional=True)
            if error == ErrorCode.STALE_MEMBER_EPOCH:
                error = ErrorCode.ILLEGAL_GENERATION
        elif args.generation_id >= 0 or args.member_id:
            error = self._commit_error(args) if self.exists else ErrorCode.ILLEGAL_GENERATION
        results, records, staged = self._stage_offsets(args, error)
        if records:
            write_error = self.store.write(self.group_id, records, (args.producer_id, args.producer_epoch))
            for tp in staged:
                results[tp] = write_error
            if write_error == ErrorCode.NONE:
                self.exists = True
                self.pending_txn_offsets.setdefault(args.producer_id, {}).update(staged)
        reply(out, {"results": results})

    def _txn_marker(self, args: TransactionEnded, out: Reply) -> None:
        """A transaction marker reached this group's partition: its offsets count (COMMIT) or go."""
        ended = self.pending_txn_offsets.pop(args.producer_id, {})
        if args.commit:
            self.offsets.update(ended)
        reply(out, {"error_code": ErrorCode.NONE})

    def _fetch(self, args: FetchOffsets, out: Reply) -> None:
        if self.consumer is not None and (args.member_id is not None or args.member_epoch >= 0):
            # KIP-848: a member fetching its group's offsets must be one, at its current epoch.
            error = self.consumer.commit_error(args.member_id or "", args.member_epoch)
            if error is not None:
                reply(out, {"error_code": error, "topics": []})
                return
        wanted: list[tuple[str, list[int]]] | None = args.topics
        if wanted is None:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in self.offsets:
                by_topic.setdefault(topic, []).append(partition)
            wanted = [(t, sorted(ps)) for t, ps in sorted(by_topic.items())]
        topics = []
        for name, partitions in wanted:
            entries = []
            for index in partitions:
                o = self.offsets.get((name, index)) if self.state != GroupState.DEAD else None
                # require_stable (KIP-447): while a transaction may still commit an offset here,
                # the client waits rather than resume from the one before it.
                unstable = args.require_stable and any(
                    (name, index) in pending for pending in self.pending_txn_offsets.values())
                entries.append({"partition_index": index, "committed_offset": o.offset if o else -1,
                                "committed_leader_epoch": o.leader_epoch if o else -1,
                                "metadata": o.metadata if o else "",
                                "error_code": ErrorCode.UNSTABLE_OFFSET_COMMIT if unstable else ErrorCode.NONE})
            topics.append({"name": name, "partitions": entries})
        reply(out, {"error_code": ErrorCode.NONE, "topics": topics})

    def _offset_delete(self, args: DeleteOffsets, out: Reply) -> None:
        if not self.exists or self.state == GroupState.DEAD:
            reply(out, {"error_code": ErrorCode.GROUP_ID_NOT_FOUND, "topics": []})
            return
        if self.members and self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            reply(out, {"error_code": ErrorCode.NON_EMPTY_GROUP, "topics": []})
            return
        subscribed = self._subscribed_topics()
        records: list[tuple[bytes, bytes | None]] = []
        topics = []
        for topic in args.topics:
            entries = []
            for p in topic["partitions"]:
                index = p["partition_index"]
                if topic["name"] in subscribed:
                    entries.append({"partition_index": index, "error_code": ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC})
                    continue
                entries.append({"partition_index": index, "error_code": ErrorCode.NONE})
                if (topic["name"], index) in self.offsets:
                    records.append((offset_key(self.group_id, topic["name"], index), None))
            topics.append({"name": topic["name"], "partitions": entries})
        if records:
            error = self.store.write(self.group_id, records)
            if error != ErrorCode.NONE:
                reply(out, {"error_code": error, "topics": []})
                return
            for topic in args.topics:
                if topic["name"] not in subscribed:
                    for p in topic["partitions"]:
                        self.offsets.pop((topic["name"], p["partition_index"]), None)
        reply(out, {"error_code": ErrorCode.NONE, "topics": topics})

    def _subscribed_topics(self) -> set[str]:
        if self.consumer is not None:
            return self.consumer.subscribed_topics(self.store)
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE or self.protocol_name is None:
            return set()
        topics: set[str] = set()
        for m in self.members.values():
            topics |= subscribed_topics(m.metadata_for(self.protocol_name))
        return topics

    def _topic_deleted(self, args: TopicDeleted, out: Reply) -> None:
        """A topic was deleted: drop its committed offsets, as Kafka's coordinator does on partition
        deletion, so that a topic re-created under the name is read from ``auto.offset.reset``."""
        topic = args.topic
        removed = sorted(tp for tp in self.offsets if tp[0] == topic)
        if not removed or not self.exists or self.state == GroupState.DEAD:
            reply(out, {"error_code": ErrorCode.NONE, "removed": 0})
            return
        error = self._remove_offsets(removed)
        if error == ErrorCode.NONE:
            log.info("group %s: removed %d offset(s) of deleted topic %s", self.group_id, len(removed), topic)
        reply(out, {"error_code": error, "removed": len(removed) if error == ErrorCode.NONE else 0})

    def _remove_offsets(self, removed: list[tuple[str, int]]) -> ErrorCode:
        """Tombstone ``removed`` offsets; an Empty group left with none is Dead, with its own tombstone."""
        records: list[tuple[bytes, bytes | None]] = [(offset_key(self.group_id, t, p), None) for t, p in removed]
        empty = (self.state == GroupState.EMPTY and (self.consumer is None or not self.consumer.members)
                 and (self.share is None or not self.share.members))
        becomes_dead = empty and len(removed) == len(self.offsets)
        if becomes_dead:
            records.append((group_key(self.group_id), None))
            records += sorted(((k, None) for k in self._written), key=_group_metadata_last)
        if not records:
            return ErrorCode.NONE
        error = self.store.write(self.group_id, records)
        if error != ErrorCode.NONE:
            return error
        for tp in removed:
            del self.offsets[tp]
        if becomes_dead:
            self._written = {}
            self.consumer = None
            log.info("group %s: empty with no offsets left; removed", self.group_id)
            self._transition(GroupState.DEAD)
        return ErrorCode.NONE

    def _expire_offsets(self) -> None:
        """offsets.retention.minutes (KIP-211): an empty group's offsets expire that long after it emptied;
        a consumer group's offsets of topics no member subscribes to expire that long after their commit."""
        if not self.exists or self.state == GroupState.DEAD or self.share is not None:
            return  # (a share group's offsets are its share partitions' state, not committed offsets)
        retention = self.config.offsets_retention_ms
        now = now_ms()
        expired = []
        if self.consumer is not None:
            subscribed = self._subscribed_topics()
            for tp, o in self.offsets.items():
                if tp[0] not in subscribed and o.commit_timestamp + retention <= now:
                    expired.append(tp)
        elif self.state == GroupState.EMPTY:
            for tp, o in self.offsets.items():
                base = self.current_state_timestamp if self.current_state_timestamp is not None \
                    and self.protocol_type else o.commit_timestamp
                if base + retention <= now:
                    expired.append(tp)
        elif self.protocol_type == CONSUMER_PROTOCOL_TYPE and self.state == GroupState.STABLE:
            subscribed = self._subscribed_topics()
            for tp, o in self.offsets.items():
                if tp[0] not in subscribed and o.commit_timestamp + retention <= now:
                    expired.append(tp)
        # An Empty group with no offsets at all is removed too (becomes Dead) at this check.
        if (expired or (self.state == GroupState.EMPTY and not self.offsets)) \
                and self._remove_offsets(expired) == ErrorCode.NONE and expired:
            log.info("group %s: expired %d offset(s)", self.group_id, len(expired))

    def _unload(self, args: Unload, out: Reply) -> None:
        """This broker no longer leads the group's ``__consumer_offsets`` partition: answer held joins
        and syncs with NOT_COORDINATOR (their members find the new coordinator) and end, writing
        nothing; the new coordinator has the group from the log."""
        for m in self.members.values():
            reply(m.join_reply, join_error(ErrorCode.NOT_COORDINATOR, m.member_id))
            reply(m.sync_reply, sync_error(ErrorCode.NOT_COORDINATOR))
            m.join_reply = m.sync_reply = None
        self.exists = False
        # The new coordinator has the group from the log: nothing more is written from here.
        self.consumer = None
        self.share = None
        reply(out, {})

    # -- DescribeGroups, ListGroups, DeleteGroups ------------------------------------------------

    def _describe(self, args: DescribeGroup, out: Reply) -> None:
        if self.consumer is not None or self.share is not None:
            # DescribeGroups describes classic groups only; from v6 it says why it found none.
            code, message = ErrorCode.NONE, None
            if args.version >= 6:
                code, message = ErrorCode.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is not a classic group."
            reply(out, {"error_code": code, "error_message": message, "group_id": self.group_id,
                        "group_state": "Dead", "protocol_type": "", "protocol_data": "", "members": []})
            return
        if not self.exists or self.state == GroupState.DEAD:
            reply(out, {"error_code": ErrorCode.NONE, "group_id": self.group_id, "group_state": "Dead",
                        "protocol_type": "", "protocol_data": "", "members": []})
            return
        stable = self.state == GroupState.STABLE
        members = [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_metadata": m.metadata_for(self.protocol_name) if stable else b"",
                    "member_assignment": m.assignment if stable else b""} for m in self.members.values()]
        reply(out, {"error_code": ErrorCode.NONE, "group_id": self.group_id, "group_state": self.state.value,
                    "protocol_type": self.protocol_type or "",
                    "protocol_data": (self.protocol_name or "") if stable else "", "members": members})

    def _list(self, args: ListGroup, out: Reply) -> None:
        if not self.exists or self.state == GroupState.DEAD:
            reply(out, {})
            return
        if self.consumer is not None:
            reply(out, {"group_id": self.group_id, "protocol_type": CONSUMER_PROTOCOL_TYPE,
                        "group_state": self.consumer.state, "group_type": "consumer"})
            return
        if self.share is not None:
            reply(out, {"group_id": self.group_id, "protocol_type": SHARE_GROUP_TYPE,
                        "group_state": self.share.state, "group_type": SHARE_GROUP_TYPE})
            return
        reply(out, {"group_id": self.group_id, "protocol_type": self.protocol_type or "",
                    "group_state": self.state.value, "group_type": "classic"})

    def _delete(self, args: DeleteGroup, out: Reply) -> None:
        if not self.exists or self.state == GroupState.DEAD:
            reply(out, {"error_code": ErrorCode.GROUP_ID_NOT_FOUND})
            return
        if self.members or self.state != GroupState.EMPTY or (self.consumer is not None and self.consumer.members) \
                or (self.share is not None and self.share.members):
            reply(out, {"error_code": ErrorCode.NON_EMPTY_GROUP})
            return
        records: list[tuple[bytes, bytes | None]] = [(offset_key(self.group_id, t, p), None) for t, p in self.offsets]
        records.append((group_key(self.group_id), None))
        records += sorted(((k, None) for k in self._written), key=_group_metadata_last)
        error = self.store.write(self.group_id, records)
        if error != ErrorCode.NONE:
            reply(out, {"error_code": error})
            return
        self.offsets.clear()
        self._written = {}
        self.consumer = None
        self.share = None
        self._transition(GroupState.DEAD)
        log.info("group %s: deleted", self.group_id)
        reply(out, {"error_code": ErrorCode.NONE})
