"""The records of ``__share_group_state`` (KIP-932), in Kafka's formats: ShareSnapshot (key type 0:
a share-partition's whole delivery state) and ShareUpdate (1: the batches that changed), each keyed
by group, topic id and partition; a ShareSnapshot key with no value is the share-partition's
deletion.  ``replay`` folds a partition's records into each share-partition's latest state, as
Kafka's share coordinator does on load.

A key is its record type (int16) then its fields, not flexible; a value is its version (int16, 0)
then a flexible body, encoded by ``wire``'s codec from schemas transcribed from Kafka's
share-coordinator message definitions.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pykafkad.metadata.znodes import kafka_uuid
from wire.codec import message_decoder, message_encoder
from wire.schema import ArrayOf, Field, MessageSchema, Struct, Versions

SHARE_STATE_TOPIC = "__share_group_state"
SNAPSHOT, UPDATE = 0, 1
# Delivery states as persisted: an acquired record is written as available.
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4
NOT_SET = -1

_V0 = Versions(0)
_I16 = struct.Struct(">h")

_STATE_BATCHES = ArrayOf(Struct("StateBatch", (
    Field("first_offset", "int64", _V0),
    Field("last_offset", "int64", _V0),
    Field("delivery_state", "int8", _V0),
    Field("delivery_count", "int16", _V0),
)))
_COMPLETE = Field("delivery_complete_count", "int32", _V0, tag=0, tagged=_V0, default=-1)

VALUES = {
    SNAPSHOT: MessageSchema(name="ShareSnapshotValue", valid=Versions(0, 0), flexible=_V0, fields=(
        Field("snapshot_epoch", "int32", _V0),
        Field("state_epoch", "int32", _V0),
        Field("leader_epoch", "int32", _V0),
        Field("start_offset", "int64", _V0),
        _COMPLETE,
        Field("create_timestamp", "int64", _V0),
        Field("write_timestamp", "int64", _V0),
        Field("state_batches", _STATE_BATCHES, _V0),
    )),
    UPDATE: MessageSchema(name="ShareUpdateValue", valid=Versions(0, 0), flexible=_V0, fields=(
        Field("snapshot_epoch", "int32", _V0),
        Field("leader_epoch", "int32", _V0),
        Field("start_offset", "int64", _V0),
        _COMPLETE,
        Field("state_batches", _STATE_BATCHES, _V0),
    )),
}
_ENCODE = {kind: message_encoder(schema, 0) for kind, schema in VALUES.items()}
_DECODE = {kind: message_decoder(schema, 0) for kind, schema in VALUES.items()}


class ShareStateRecordError(ValueError):
    """A ``__share_group_state`` record that does not decode."""


@dataclass(frozen=True)
class StateBatch:
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


ShareKey = tuple[str, uuid.UUID, int]  # (group, topic id, partition)


@dataclass(frozen=True)
class ShareState:
    """What the share coordinator holds of one share-partition."""

    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...] = ()
    snapshot_epoch: int = 0
    delivery_complete_count: int = NOT_SET
    create_timestamp: int = 0
    write_timestamp: int = 0
    # How many ShareUpdate records follow the last snapshot (Kafka snapshots again after 500).
    updates: int = field(default=0, compare=False)


def coordinator_key(group: str, topic_id: uuid.UUID, partition: int) -> str:
    """The string Kafka hashes to place a share-partition's state (``SharePartitionKey.asCoordinatorKey``)."""
    return f"{group}:{kafka_uuid(topic_id)}:{partition}"


def encode_key(kind: int, key: ShareKey) -> bytes:
    group, topic_id, partition = key
    name = group.encode()
    return _I16.pack(kind) + _I16.pack(len(name)) + name + topic_id.bytes + struct.pack(">i", partition)


def decode_key(data: bytes) -> tuple[int, ShareKey]:
    try:
        (kind,) = _I16.unpack_from(data, 0)
        (size,) = _I16.unpack_from(data, 2)
        group = bytes(data[4:4 + size]).decode()
        topic_id = uuid.UUID(bytes=bytes(data[4 + size:20 + size]))
        (partition,) = struct.unpack_from(">i", data, 20 + size)
    except (struct.error, UnicodeDecodeError, ValueError) as e:
        raise ShareStateRecordError(f"a {SHARE_STATE_TOPIC} key does not decode: {e}") from e
    if kind not in VALUES:
        raise ShareStateRecordError(f"unknown {SHARE_STATE_TOPIC} record type {kind}")
    return kind, (group, topic_id, partition)


def _batches(batches: Iterable[StateBatch]) -> list[dict[str, int]]:
    return [{"first_offset": b.first_offset, "last_offset": b.last_offset, "delivery_state": b.delivery_state,
             "delivery_count": b.delivery_count} for b in batches]


def encode_snapshot(state: ShareState) -> bytes:
    out = bytearray(_I16.pack(0))
    _ENCODE[SNAPSHOT](out, {
        "snapshot_epoch": state.snapshot_epoch, "state_epoch": state.state_epoch,
        "leader_epoch": state.leader_epoch, "start_offset": state.start_offset,
        "delivery_complete_count": state.delivery_complete_count, "create_timestamp": state.create_timestamp,
        "write_timestamp": state.write_timestamp, "state_batches": _batches(state.batches)})
    return bytes(out)


def decode_value(kind: int, data: bytes) -> dict[str, Any]:
    try:
        (version,) = _I16.unpack_from(data, 0)
        if version != 0:
            raise ShareStateRecordError(f"{VALUES[kind].name} version {version} is not known")
        fields, _ = _DECODE[kind](memoryview(data), 2)
        return fields
    except (struct.error, ValueError, KeyError, IndexError) as e:
        raise ShareStateRecordError(f"a {VALUES[kind].name} does not decode: {e}") from e


def _state_batches(body: dict[str, Any]) -> tuple[StateBatch, ...]:
    return tuple(StateBatch(b["first_offset"], b["last_offset"], b["delivery_state"], b["delivery_count"])
                 for b in body["state_batches"])


def merge_batches(old: Iterable[StateBatch], new: Iterable[StateBatch], start_offset: int) -> tuple[StateBatch, ...]:
    """``old`` overlaid with ``new`` (the newer state wins where they overlap), nothing below
    ``start_offset`` kept (Kafka's PersisterStateBatchCombiner, without its merging of neighbours)."""
    pieces: list[StateBatch] = []
    fresh = sorted(new, key=lambda b: b.first_offset)
    for batch in old:
        parts = [batch]
        for n in fresh:
            cut = []
            for p in parts:
                if n.last_offset < p.first_offset or n.first_offset > p.last_offset:
                    cut.append(p)
                    continue
                if p.first_offset < n.first_offset:
                    cut.append(replace(p, last_offset=n.first_offset - 1))
                if p.last_offset > n.last_offset:
                    cut.append(replace(p, first_offset=n.last_offset + 1))
            parts = cut
        pieces += parts
    pieces += fresh
    kept = []
    for b in sorted(pieces, key=lambda b: b.first_offset):
        if b.last_offset < start_offset:
            continue
        kept.append(replace(b, first_offset=max(b.first_offset, start_offset)))
    return tuple(kept)


def apply(current: ShareState | None, kind: int, body: dict[str, Any] | None) -> ShareState | None:
    """The state after one record: a snapshot replaces it, an update merges into it, no value deletes it."""
    if body is None:
        return None
    if kind == SNAPSHOT:
        return ShareState(body["state_epoch"], body["leader_epoch"], body["start_offset"], _state_batches(body),
                          body["snapshot_epoch"], body["delivery_complete_count"], body["create_timestamp"],
                          body["write_timestamp"])
    if current is None:
        return None  # an update of nothing (its snapshot pruned or deleted): Kafka ignores it too
    start = body["start_offset"] if body["start_offset"] != NOT_SET else current.start_offset
    return replace(current, leader_epoch=body["leader_epoch"] if body["leader_epoch"] != NOT_SET
                   else current.leader_epoch, start_offset=start,
                   batches=merge_batches(current.batches, _state_batches(body), start),
                   delivery_complete_count=body["delivery_complete_count"], updates=current.updates + 1)


def replay(records: Iterable[tuple[bytes | None, bytes | None]]) -> dict[ShareKey, ShareState | None]:
    """Each share-partition's state after a partition's records (None: deleted), in log order."""
    states: dict[ShareKey, ShareState | None] = {}
    for key, value in records:
        if key is None:
            continue
        kind, share_key = decode_key(key)
        body = None if value is None else decode_value(kind, value)
        states[share_key] = apply(states.get(share_key), kind, body)
    return states
