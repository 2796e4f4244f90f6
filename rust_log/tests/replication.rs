//! A follower's side of replication: appending the leader's batches unchanged, and truncating to
//! where it and a new leader diverge.
mod common;

use _rust_log::PartitionLog;
use common::*;

fn pbatch(pid: i64, epoch: i16, seq: i32, n: usize, ts: i64) -> Vec<u8> {
    let recs = (0..n).map(|i| Rec::new(ts + i as i64, b"value")).collect();
    build(&BatchSpec::new(recs).producer(pid, epoch, seq))
}

/// Every byte the log holds, segment by segment, as a follower would fetch it.
fn whole_log(log: &PartitionLog) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = log.log_start_offset();
    while offset < log.log_end_offset() {
        let chunk = log.read(offset, 1 << 20, true).unwrap();
        let batches = batches_in(&chunk);
        offset = batches.last().unwrap().1 + 1;
        out.extend_from_slice(&chunk);
    }
    out
}

/// A leader log over several segments: plain batches in epoch 0, then producer 7's in epoch 3.
fn leader(dir: &std::path::Path) -> PartitionLog {
    let mut log = open(dir, small_cfg(600, 100), true);
    for i in 0..4 {
        log.append(simple(3, 1000 + i, 60), 0, None).unwrap();
    }
    for seq in 0..3 {
        log.append(pbatch(7, 0, seq * 2, 2, 2000 + i64::from(seq)), 3, None)
            .unwrap();
    }
    assert!(log.segment_base_offsets().len() > 2);
    assert_eq!(log.log_end_offset(), 18);
    log
}

#[test]
fn a_follower_appends_the_leaders_batches_unchanged() {
    let (ldir, fdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let leader = leader(ldir.path());
    let mut follower = open(fdir.path(), small_cfg(600, 100), true);
    let mut offset = 0;
    while offset < leader.log_end_offset() {
        // Fetched a segment's worth at a time, as a replica fetcher does.
        let chunk = leader.read(offset, 1 << 20, true).unwrap();
        let info = follower.append_as_follower(chunk.clone()).unwrap();
        assert_eq!(info.base_offset, offset);
        offset = info.last_offset + 1;
    }
    assert_eq!(whole_log(&follower), whole_log(&leader));
    assert_eq!(follower.log_end_offset(), 18);
    assert_eq!(follower.leader_epochs(), leader.leader_epochs());
    assert_eq!(follower.leader_epochs(), &[(0, 0), (3, 12)]);
    assert_eq!(follower.end_offset_for_epoch(0).unwrap(), (0, 12));
    // Producer state came with the batches: as a new leader it knows producer 7's last write.
    let retry = follower.append(pbatch(7, 0, 4, 2, 2002), 4, None).unwrap();
    assert!(retry.duplicate);
    assert_eq!((retry.base_offset, retry.last_offset), (16, 17));
    // And it survives a restart.
    follower.close().unwrap();
    let reopened = open(fdir.path(), small_cfg(600, 100), true);
    assert_eq!(whole_log(&reopened), whole_log(&leader));
    assert_eq!(reopened.leader_epochs(), &[(0, 0), (3, 12)]);
}

#[test]
fn a_follower_refuses_batches_it_already_has_and_corrupt_ones() {
    let (ldir, fdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let leader = leader(ldir.path());
    let mut follower = open(fdir.path(), small_cfg(600, 100), true);
    let first = leader.read(0, 1 << 20, true).unwrap();
    follower.append_as_follower(first.clone()).unwrap();
    let again = follower.append_as_follower(first.clone()).unwrap_err();
    assert_eq!(again.code, 1, "{}", again.message);
    let next = follower.log_end_offset();
    let mut corrupt = leader.read(next, 1 << 20, true).unwrap();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xff;
    assert_eq!(follower.append_as_follower(corrupt).unwrap_err().code, 2);
    assert_eq!(
        follower.log_end_offset(),
        next,
        "nothing of a refused append stays"
    );
}

#[test]
fn truncation_removes_batches_epochs_and_producer_state_from_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = leader(dir.path());
    let segments_before = log.segment_base_offsets();
    let early_hit = log.offset_for_timestamp(1001).unwrap();
    // Offset 4 lies inside the second batch (3..5) of the first segment: that batch goes whole,
    // and every later segment with it.
    assert_eq!(log.truncate_to(4).unwrap(), 3);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.segment_base_offsets(), vec![0]);
    assert!(segments_before.len() > 2);
    assert_eq!(batches_in(&whole_log(&log)), vec![(0, 2)]);
    assert_eq!(log.leader_epochs(), &[(0, 0)]);
    // Producer 7's writes are gone: its first batch is new again, not a duplicate.
    let again = log.append(pbatch(7, 0, 0, 2, 2000), 5, None).unwrap();
    assert!(!again.duplicate);
    assert_eq!(again.base_offset, 3);
    // Truncating at or past the end changes nothing.
    assert_eq!(log.truncate_to(99).unwrap(), 5);
    // What is left is found again by a restart, indexes included.
    log.close().unwrap();
    let reopened = open(dir.path(), small_cfg(600, 100), false);
    assert_eq!(reopened.log_end_offset(), 5);
    assert_eq!(reopened.leader_epochs(), &[(0, 0), (5, 3)]);
    assert_eq!(reopened.offset_for_timestamp(1001).unwrap(), early_hit);
    assert_eq!(batches_in(&whole_log(&reopened)), vec![(0, 2), (3, 4)]);
}

#[test]
fn truncating_at_the_end_drops_an_epoch_assigned_there_with_nothing_written() {
    // This replica led epoch 4 and wrote nothing in it, then followed a leader that never had
    // epoch 4: told to truncate to where its log already ends, it must forget the epoch, or it
    // names epoch 4 as its last in every fetch and is told to truncate again, for good.
    let dir = tempfile::tempdir().unwrap();
    let mut log = leader(dir.path());
    assert!(log.assign_leader_epoch(4).unwrap());
    assert_eq!(log.leader_epochs(), &[(0, 0), (3, 12), (4, 18)]);
    assert_eq!(log.truncate_to(18).unwrap(), 18);
    assert_eq!(log.leader_epochs(), &[(0, 0), (3, 12)]);
    log.close().unwrap();
    let reopened = open(dir.path(), small_cfg(600, 100), false);
    assert_eq!(reopened.leader_epochs(), &[(0, 0), (3, 12)]);
}

#[test]
fn truncation_below_the_log_start_starts_the_log_over_there() {
    let (ldir, fdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let leader = leader(ldir.path());
    let mut follower = open(fdir.path(), small_cfg(600, 100), true);
    follower
        .append_as_follower(leader.read(0, 1 << 20, true).unwrap())
        .unwrap();
    follower.delete_records(3).unwrap();
    assert_eq!(follower.truncate_to(0).unwrap(), 0);
    assert_eq!(
        (follower.log_start_offset(), follower.log_end_offset()),
        (0, 0)
    );
    // A follower whose leader's log starts later than its own end starts over there.
    let from = leader.segment_base_offsets()[2];
    follower.truncate_fully_and_start_at(from).unwrap();
    assert_eq!(
        (follower.log_start_offset(), follower.log_end_offset()),
        (from, from)
    );
    follower
        .append_as_follower(leader.read(from, 1 << 20, true).unwrap())
        .unwrap();
    assert_eq!(
        batches_in(&follower.read(from, 1 << 20, true).unwrap())[0].0,
        from
    );
    follower.close().unwrap();
    let reopened = open(fdir.path(), small_cfg(600, 100), false);
    assert_eq!(reopened.log_start_offset(), from);
    assert_eq!(batches_in(&whole_log(&reopened))[0].0, from);
}
