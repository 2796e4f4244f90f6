"""__share_group_state's records: keys and snapshots round-trip, updates merge as Kafka's
PersisterStateBatchCombiner overlays them, deletions and records out of order replay as Kafka's
share coordinator replays them, and the placement hash is Kafka's."""

from __future__ import annotations

import uuid

from pykafkad.coordinator.share.coordinator import partition_for
from pykafkad.coordinator.share.share_state_records import (
    ACKNOWLEDGED,
    ARCHIVED,
    AVAILABLE,
    SNAPSHOT,
    UPDATE,
    VALUES,
    ShareState,
    StateBatch,
    coordinator_key,
    encode_key,
    encode_snapshot,
    merge_batches,
    replay,
)
from wire.codec import message_encoder

KEY = ("g", uuid.UUID("4fe8a046-31ec-4806-9059-4887380e7388"), 3)


def _update(leader_epoch: int, start_offset: int, batches: list[StateBatch]) -> bytes:
    out = bytearray(b"\x00\x00")
    message_encoder(VALUES[UPDATE], 0)(out, {
        "snapshot_epoch": 0, "leader_epoch": leader_epoch, "start_offset": start_offset,
        "delivery_complete_count": -1, "state_batches": [
            {"first_offset": b.first_offset, "last_offset": b.last_offset, "delivery_state": b.delivery_state,
             "delivery_count": b.delivery_count} for b in batches]})
    return bytes(out)


def test_a_snapshot_round_trips() -> None:
    state = ShareState(2, 5, 100, (StateBatch(100, 109, ACKNOWLEDGED, 1), StateBatch(110, 119, AVAILABLE, 3)), 7, 10,
                       1, 2)
    assert replay([(encode_key(SNAPSHOT, KEY), encode_snapshot(state))]) == {KEY: state}


def test_updates_overlay_and_prune_below_the_start() -> None:
    snapshot = ShareState(0, 1, 0, (StateBatch(0, 9, AVAILABLE, 1),))
    states = replay([
        (encode_key(SNAPSHOT, KEY), encode_snapshot(snapshot)),
        (encode_key(UPDATE, KEY), _update(-1, 3, [StateBatch(5, 6, ARCHIVED, 2)])),
    ])
    assert states[KEY].start_offset == 3 and states[KEY].leader_epoch == 1
    assert states[KEY].batches == (StateBatch(3, 4, AVAILABLE, 1), StateBatch(5, 6, ARCHIVED, 2),
                                   StateBatch(7, 9, AVAILABLE, 1))


def test_a_deletion_and_an_update_without_its_snapshot() -> None:
    snapshot = ShareState(0, 1, 0)
    assert replay([(encode_key(SNAPSHOT, KEY), encode_snapshot(snapshot)), (encode_key(SNAPSHOT, KEY), None)]) == {
        KEY: None}
    assert replay([(encode_key(UPDATE, KEY), _update(1, 0, []))]) == {KEY: None}


def test_merge_keeps_what_the_newer_batches_do_not_cover() -> None:
    old = [StateBatch(0, 99, AVAILABLE, 1)]
    assert merge_batches(old, [StateBatch(10, 19, ACKNOWLEDGED, 1)], 0) == (
        StateBatch(0, 9, AVAILABLE, 1), StateBatch(10, 19, ACKNOWLEDGED, 1), StateBatch(20, 99, AVAILABLE, 1))


def test_the_state_s_partition_is_kafka_s() -> None:
    # SharePartitionKey.asCoordinatorKey: the topic id as Kafka's Uuid.toString (base64url, unpadded),
    # placed by Utils.abs(key.hashCode()) % partitions.
    key = coordinator_key(*KEY)
    assert key == "g:T-igRjHsSAaQWUiHOA5ziA:3"
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    assert partition_for(key, 50) == abs(h) % 50
