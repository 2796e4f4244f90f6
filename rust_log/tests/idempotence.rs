//! Idempotent producer sequence/epoch checks and their persistence.
mod common;

use common::*;

fn pbatch(pid: i64, epoch: i16, seq: i32, n: usize) -> Vec<u8> {
    let recs = (0..n).map(|i| Rec::new(1000 + i as i64, b"v")).collect();
    build(&BatchSpec::new(recs).producer(pid, epoch, seq))
}

#[test]
fn duplicates_return_original_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let a = log.append(pbatch(1, 0, 0, 3), 0, None).unwrap();
    let b = log.append(pbatch(1, 0, 3, 2), 0, None).unwrap();
    assert_eq!(
        (a.base_offset, a.last_offset, b.base_offset, b.last_offset),
        (0, 2, 3, 4)
    );
    let size = log.size_bytes();
    let dup = log.append(pbatch(1, 0, 0, 3), 0, None).unwrap();
    assert_eq!(
        (
            dup.base_offset,
            dup.last_offset,
            dup.log_append_time,
            dup.duplicate
        ),
        (0, 2, -1, true)
    );
    let dup = log.append(pbatch(1, 0, 3, 2), 0, None).unwrap();
    assert_eq!(
        (dup.base_offset, dup.last_offset, dup.duplicate),
        (3, 4, true)
    );
    assert_eq!(log.size_bytes(), size);
    assert_eq!(log.log_end_offset(), 5);
}

#[test]
fn only_last_five_batches_are_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    for i in 0..6 {
        log.append(pbatch(1, 0, i, 1), 0, None).unwrap();
    }
    assert!(log.append(pbatch(1, 0, 1, 1), 0, None).unwrap().duplicate);
    // seq 0 fell out of the window: now it is out of order.
    assert_eq!(
        log.append(pbatch(1, 0, 0, 1), 0, None).unwrap_err().code,
        45
    );
}

#[test]
fn gaps_and_old_epochs_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(pbatch(9, 2, 0, 2), 0, None).unwrap();
    assert_eq!(
        log.append(pbatch(9, 2, 5, 1), 0, None).unwrap_err().code,
        45
    );
    assert_eq!(
        log.append(pbatch(9, 1, 2, 1), 0, None).unwrap_err().code,
        47
    );
    // new epoch must start at 0
    assert_eq!(
        log.append(pbatch(9, 3, 2, 1), 0, None).unwrap_err().code,
        45
    );
    let r = log.append(pbatch(9, 3, 0, 1), 0, None).unwrap();
    assert_eq!(r.base_offset, 2);
    // old epoch now fenced
    assert_eq!(
        log.append(pbatch(9, 2, 2, 1), 0, None).unwrap_err().code,
        47
    );
    // unknown producers accepted at any sequence
    assert_eq!(
        log.append(pbatch(10, 0, 42, 1), 0, None)
            .unwrap()
            .base_offset,
        3
    );
    assert_eq!(
        log.append(pbatch(10, 0, 43, 1), 0, None)
            .unwrap()
            .base_offset,
        4
    );
}

#[test]
fn sequence_wraps_at_int_max() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(pbatch(4, 0, i32::MAX - 1, 2), 0, None).unwrap();
    assert!(!log.append(pbatch(4, 0, 0, 1), 0, None).unwrap().duplicate);
    // a batch that itself wraps
    log.append(pbatch(5, 0, i32::MAX, 3), 0, None).unwrap();
    assert!(
        log.append(pbatch(5, 0, i32::MAX, 3), 0, None)
            .unwrap()
            .duplicate
    );
    assert!(!log.append(pbatch(5, 0, 2, 1), 0, None).unwrap().duplicate);
}

#[test]
fn state_survives_clean_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        log_append_time: true,
        ..cfg()
    };
    {
        let mut log = open(dir.path(), c, true);
        log.append(pbatch(1, 0, 0, 2), 0, Some(77)).unwrap();
        log.close().unwrap();
    }
    assert!(dir.path().join(format!("{:020}.snapshot", 2)).exists());
    let mut log = open(dir.path(), c, true);
    let dup = log.append(pbatch(1, 0, 0, 2), 0, Some(99)).unwrap();
    assert_eq!(
        (
            dup.base_offset,
            dup.last_offset,
            dup.log_append_time,
            dup.duplicate
        ),
        (0, 1, 77, true)
    );
    assert_eq!(
        log.append(pbatch(1, 0, 5, 1), 0, None).unwrap_err().code,
        45
    );
    assert_eq!(
        log.append(pbatch(1, 0, 2, 1), 0, None).unwrap().base_offset,
        2
    );
    log.close().unwrap();
    drop(log);
    // Only the newest snapshot is kept.
    let snaps: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".snapshot"))
        .collect();
    assert_eq!(snaps.len(), 1);
}

#[test]
fn state_survives_unclean_reopen_without_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut log = open(dir.path(), cfg(), true);
        log.append(pbatch(1, 0, 0, 2), 0, None).unwrap();
        log.append(pbatch(2, 5, 0, 1), 0, None).unwrap();
        // Simulate kill -9: no close, no snapshot.
        std::mem::forget(log);
    }
    let mut log = open(dir.path(), cfg(), false);
    assert!(log.append(pbatch(1, 0, 0, 2), 0, None).unwrap().duplicate);
    assert_eq!(
        log.append(pbatch(2, 4, 1, 1), 0, None).unwrap_err().code,
        47
    );
    assert_eq!(
        log.append(pbatch(2, 5, 1, 1), 0, None).unwrap().base_offset,
        3
    );
}

#[test]
fn snapshot_then_more_appends_then_crash() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut log = open(dir.path(), cfg(), true);
        log.append(pbatch(1, 0, 0, 1), 0, None).unwrap();
        log.close().unwrap();
    }
    {
        let mut log = open(dir.path(), cfg(), true);
        log.append(pbatch(1, 0, 1, 1), 0, None).unwrap();
        log.append(pbatch(3, 0, 0, 1), 0, None).unwrap();
        std::mem::forget(log);
    }
    let mut log = open(dir.path(), cfg(), false);
    assert!(log.append(pbatch(1, 0, 1, 1), 0, None).unwrap().duplicate);
    assert!(log.append(pbatch(3, 0, 0, 1), 0, None).unwrap().duplicate);
    assert_eq!(
        log.append(pbatch(1, 0, 2, 1), 0, None).unwrap().base_offset,
        3
    );
}

#[test]
fn idle_producers_expire_but_not_those_in_a_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(pbatch(1, 0, 0, 3), 0, None).unwrap(); // last timestamp 1002
    let mut txn = BatchSpec::new(vec![Rec::new(1000, b"t")]).producer(2, 0, 0);
    txn.extra_attributes = 0x10;
    log.append(build(&txn), 0, None).unwrap(); // open transaction
    assert_eq!(log.remove_expired_producers(1002 + 499, 500), 0);
    assert_eq!(log.remove_expired_producers(1002 + 500, 500), 1);
    let left: Vec<i64> = log
        .producer_state()
        .describe()
        .iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(left, vec![2]);
    // Forgotten: it goes on at any sequence, as an unknown producer (as in Kafka, KIP-360).
    assert_eq!(
        log.append(pbatch(1, 0, 7, 1), 0, None).unwrap().base_offset,
        4
    );
    // A clean reopen writes and loads a snapshot without it; loaded entries keep their timestamps.
    log.close().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    assert_eq!(log.producer_state().len(), 2);
    assert_eq!(log.remove_expired_producers(1000 + 10_000, 500), 1);
    assert_eq!(log.producer_state().len(), 1);
}
