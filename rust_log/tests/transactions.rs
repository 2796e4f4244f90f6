//! Transactions in the log: markers, the last stable offset, the aborted
//! transaction index, and their survival through reopen, crash recovery,
//! truncation and replication.
mod common;

use _rust_log::txn_marker::Marker;
use common::*;

const TXN: i16 = 0x10;

fn txn_batch(pid: i64, epoch: i16, seq: i32, n: usize) -> Vec<u8> {
    let recs = (0..n).map(|i| Rec::new(1000 + i as i64, b"t")).collect();
    let mut spec = BatchSpec::new(recs).producer(pid, epoch, seq);
    spec.extra_attributes = TXN;
    build(&spec)
}

fn plain(n: usize) -> Vec<u8> {
    simple(n, 1000, 4)
}

const COMMIT: Marker = Marker {
    commit: true,
    coordinator_epoch: 0,
};
const ABORT: Marker = Marker {
    commit: false,
    coordinator_epoch: 0,
};

#[test]
fn the_last_stable_offset_waits_for_open_and_unreplicated_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(plain(2), 0, None).unwrap(); // 0-1
    log.append(txn_batch(7, 0, 0, 3), 0, None).unwrap(); // 2-4
    log.append(plain(1), 0, None).unwrap(); // 5
    assert_eq!(log.last_stable_offset(6), 2);
    assert_eq!(log.open_transactions(), vec![(7, 2)]);
    let (info, done) = log.append_marker(7, 0, COMMIT, 0, Some(2000)).unwrap(); // 6
    assert_eq!(info.base_offset, 6);
    let done = done.unwrap();
    assert!(done.commit && done.first_offset == 2 && done.marker_offset == 6);
    // Ended, but the marker is not below the high watermark yet.
    assert_eq!(log.last_stable_offset(6), 2);
    assert_eq!(log.last_stable_offset(7), 7);
    assert!(log.open_transactions().is_empty());
    assert!(log.aborted_transactions(0, 7).is_empty());
}

#[test]
fn aborts_are_indexed_and_listed_for_the_fetched_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(txn_batch(1, 0, 0, 2), 0, None).unwrap(); // 0-1
    log.append(txn_batch(2, 0, 0, 2), 0, None).unwrap(); // 2-3
    log.append_marker(1, 0, ABORT, 0, Some(2000)).unwrap(); // 4
    log.append(plain(1), 0, None).unwrap(); // 5
    assert_eq!(log.last_stable_offset(6), 2, "producer 2 is still open");
    log.append_marker(2, 0, COMMIT, 0, Some(2000)).unwrap(); // 6
    assert_eq!(log.last_stable_offset(7), 7);
    assert_eq!(log.aborted_transactions(0, 7), vec![(1, 0)]);
    assert_eq!(
        log.aborted_transactions(5, 7),
        vec![],
        "the abort ended before 5"
    );
    let idx = dir.path().join("00000000000000000000.txnindex");
    assert_eq!(std::fs::metadata(&idx).unwrap().len(), 34);
    // The marker is a control batch of Kafka's layout.
    let data = log.read(4, 1 << 20, true).unwrap();
    let batch = &data[..];
    assert_eq!(
        batch[21..23],
        [0x00, 0x30],
        "transactional and control attributes"
    );
}

#[test]
fn markers_check_producer_and_coordinator_epochs() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(txn_batch(3, 5, 0, 1), 0, None).unwrap();
    let err = log.append_marker(3, 4, COMMIT, 0, Some(2000)).unwrap_err();
    assert_eq!(err.code, 47, "INVALID_PRODUCER_EPOCH");
    log.append_marker(
        3,
        5,
        Marker {
            commit: true,
            coordinator_epoch: 2,
        },
        0,
        Some(2000),
    )
    .unwrap();
    let err = log
        .append_marker(
            3,
            5,
            Marker {
                commit: false,
                coordinator_epoch: 1,
            },
            0,
            Some(2000),
        )
        .unwrap_err();
    assert_eq!(err.code, 52, "TRANSACTION_COORDINATOR_FENCED");
    // A marker for a producer with nothing open here is written and ends nothing.
    let (_, done) = log.append_marker(9, 0, ABORT, 0, Some(2000)).unwrap();
    assert!(done.is_none());
}

#[test]
fn a_non_transactional_write_inside_a_transaction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(txn_batch(4, 0, 0, 1), 0, None).unwrap();
    let recs = vec![Rec::new(1000, b"x")];
    let plain_from_4 = build(&BatchSpec::new(recs).producer(4, 0, 1));
    assert_eq!(log.append(plain_from_4, 0, None).unwrap_err().code, 48);
}

#[test]
fn open_transactions_and_aborts_survive_a_clean_reopen_and_a_crash() {
    for clean in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut log = open(dir.path(), cfg(), true);
            log.append(txn_batch(1, 0, 0, 2), 0, None).unwrap(); // 0-1
            log.append_marker(1, 0, ABORT, 0, Some(2000)).unwrap(); // 2
            log.append(txn_batch(2, 0, 0, 2), 0, None).unwrap(); // 3-4
            if clean {
                log.close().unwrap();
            } else {
                log.flush().unwrap();
                // A crash after the marker reached the log but before its
                // index entry did.
                std::fs::remove_file(dir.path().join("00000000000000000000.txnindex")).unwrap();
                std::mem::forget(log);
            }
        }
        let mut log = open(dir.path(), cfg(), clean);
        assert_eq!(log.open_transactions(), vec![(2, 3)], "clean={clean}");
        assert_eq!(log.last_stable_offset(5), 3);
        assert_eq!(
            log.aborted_transactions(0, 5),
            vec![(1, 0)],
            "clean={clean}"
        );
        log.append_marker(2, 0, COMMIT, 0, Some(2000)).unwrap();
        assert_eq!(log.last_stable_offset(6), 6);
    }
}

#[test]
fn truncation_reopens_a_transaction_whose_marker_it_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(txn_batch(1, 0, 0, 2), 0, None).unwrap(); // 0-1
    log.append_marker(1, 0, ABORT, 0, Some(2000)).unwrap(); // 2
    log.append(plain(1), 0, None).unwrap(); // 3
    assert_eq!(log.aborted_transactions(0, 4), vec![(1, 0)]);
    log.truncate_to(2).unwrap();
    assert_eq!(log.open_transactions(), vec![(1, 0)]);
    assert!(log.aborted_transactions(0, 4).is_empty());
    assert_eq!(log.last_stable_offset(2), 0);
}

#[test]
fn a_follower_copies_markers_and_builds_the_same_index() {
    let leader_dir = tempfile::tempdir().unwrap();
    let follower_dir = tempfile::tempdir().unwrap();
    let mut leader = open(leader_dir.path(), cfg(), true);
    leader.append(txn_batch(1, 0, 0, 2), 3, None).unwrap();
    leader.append(txn_batch(2, 0, 0, 1), 3, None).unwrap();
    leader.append_marker(1, 0, ABORT, 3, Some(2000)).unwrap();
    let data = leader.read(0, 1 << 20, true).unwrap();
    let mut follower = open(follower_dir.path(), cfg(), true);
    follower.append_as_follower(data).unwrap();
    assert_eq!(follower.aborted_transactions(0, 10), vec![(1, 0)]);
    assert_eq!(follower.open_transactions(), vec![(2, 2)]);
    assert_eq!(follower.log_end_offset(), leader.log_end_offset());
}

#[test]
fn a_coordinators_transactional_batches_carry_no_sequence_and_only_their_epoch_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    assert_eq!(
        log.append(txn_batch(5, 2, -1, 1), 0, None)
            .unwrap_err()
            .code,
        87,
        "from a client"
    );
    log.append_from_coordinator(txn_batch(5, 2, -1, 1), 0, None)
        .unwrap();
    log.append_from_coordinator(txn_batch(5, 2, -1, 1), 0, None)
        .unwrap();
    assert_eq!(log.open_transactions(), vec![(5, 0)]);
    let stale = log.append_from_coordinator(txn_batch(5, 1, -1, 1), 0, None);
    assert_eq!(stale.unwrap_err().code, 47);
    log.append_marker(5, 2, COMMIT, 0, Some(2000)).unwrap();
    assert_eq!(log.last_stable_offset(3), 3);
}

fn compact_cfg() -> _rust_log::LogConfig {
    _rust_log::LogConfig {
        segment_bytes: 400,
        index_interval_bytes: 64,
        cleanup_policy: _rust_log::log_config::CleanupPolicy::parse("compact").unwrap(),
        min_cleanable_dirty_ratio: 0.0,
        ..cfg()
    }
}

fn keyed_txn(pid: i64, seq: i32, key: &str, value: &str) -> Vec<u8> {
    let mut spec = BatchSpec::new(vec![keyed(1000, key, Some(value))]).producer(pid, 0, seq);
    spec.extra_attributes = TXN;
    build(&spec)
}

fn values_of(log: &_rust_log::PartitionLog, key: &str) -> Vec<Vec<u8>> {
    all_records(log)
        .into_iter()
        .filter(|g| g.key.as_deref() == Some(key.as_bytes()))
        .filter_map(|g| g.value)
        .collect()
}

#[test]
fn compaction_removes_aborted_values_and_never_lets_them_shadow_a_committed_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), compact_cfg(), true);
    log.append(keyed_txn(1, 0, "k", "committed"), 0, Some(1000))
        .unwrap();
    log.append_marker(1, 0, COMMIT, 0, Some(1000)).unwrap();
    log.append(keyed_txn(2, 0, "k", "aborted"), 0, Some(1000))
        .unwrap();
    log.append_marker(2, 0, ABORT, 0, Some(1000)).unwrap();
    // Enough later records to close the segments holding both.
    for i in 0..20 {
        let b = build(&BatchSpec::new(vec![keyed(
            1000,
            &format!("other{i}"),
            Some("x"),
        )]));
        log.append(b, 0, Some(1000)).unwrap();
    }
    assert!(log.segment_base_offsets().len() > 2);
    log.clean(5000).unwrap().expect("a cleaning pass");
    assert_eq!(values_of(&log, "k"), vec![b"committed".to_vec()]);
    assert_eq!(
        log.aborted_transactions(0, log.log_end_offset()),
        vec![(2, 2)]
    );
}

#[test]
fn compaction_stops_below_an_open_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), compact_cfg(), true);
    let put = |log: &mut _rust_log::PartitionLog, k: &str, v: &str| {
        let b = build(&BatchSpec::new(vec![keyed(1000, k, Some(v))]));
        log.append(b, 0, Some(1000)).unwrap();
    };
    put(&mut log, "k", "old");
    log.append(keyed_txn(3, 0, "k", "open"), 0, Some(1000))
        .unwrap();
    for i in 0..20 {
        put(&mut log, &format!("other{i}"), "x");
    }
    put(&mut log, "k", "newest");
    for i in 0..20 {
        put(&mut log, &format!("more{i}"), "x");
    }
    let _ = log.clean(5000).unwrap();
    // The open transaction's value may still commit or abort: it and what follows stay.
    assert!(values_of(&log, "k").contains(&b"open".to_vec()));
    assert!(values_of(&log, "k").contains(&b"newest".to_vec()));
}

#[test]
fn markers_outlive_their_transactions_records_by_delete_retention_then_go() {
    let dir = tempfile::tempdir().unwrap();
    let config = _rust_log::LogConfig {
        delete_retention_ms: 1000,
        ..compact_cfg()
    };
    let mut log = open(dir.path(), config, true);
    let fill = |log: &mut _rust_log::PartitionLog, prefix: &str| {
        for i in 0..20 {
            let b = build(&BatchSpec::new(vec![keyed(
                1000,
                &format!("{prefix}{i}"),
                Some("x"),
            )]));
            log.append(b, 0, Some(1000)).unwrap();
        }
    };
    let marker_at = |log: &_rust_log::PartitionLog, offset: i64| {
        batches_in(&log.read(0, 1 << 20, true).unwrap())
            .iter()
            .any(|&(base, _)| base == offset)
    };
    log.append(keyed_txn(2, 0, "a", "x"), 0, Some(1000))
        .unwrap(); // 0
    log.append_marker(2, 0, ABORT, 0, Some(1000)).unwrap(); // 1
    log.append(keyed_txn(2, 1, "b", "y"), 0, Some(1000))
        .unwrap(); // 2 (the producer's last batch: kept, emptied)
    log.append_marker(2, 0, ABORT, 0, Some(1000)).unwrap(); // 3
    fill(&mut log, "first");
    log.clean(5000).unwrap().expect("a cleaning pass");
    assert!(
        marker_at(&log, 1),
        "kept by the pass that removed its records"
    );
    assert_eq!(
        log.aborted_transactions(0, log.log_end_offset()),
        vec![(2, 0), (2, 2)]
    );
    fill(&mut log, "second");
    log.clean(6000).unwrap().expect("a second pass");
    assert!(marker_at(&log, 1), "stamped, kept until its delete horizon");
    assert!(log.clean(6500).unwrap().is_none(), "nothing due before it");
    log.clean(8000).unwrap().expect("a pass at the horizon");
    assert!(
        !marker_at(&log, 1),
        "gone once delete.retention.ms has passed"
    );
    assert!(marker_at(&log, 3), "its transaction's batch is still there");
    assert_eq!(
        log.aborted_transactions(0, log.log_end_offset()),
        vec![(2, 2)],
        "the abort left the transaction index with its marker"
    );
    drop(log);
    let log = open(dir.path(), config, true);
    assert_eq!(
        log.aborted_transactions(0, log.log_end_offset()),
        vec![(2, 2)]
    );
}

#[test]
fn after_a_marker_bumps_the_epoch_the_first_batch_starts_at_sequence_zero() {
    // Transaction version 2: each transaction ends with a marker at the next epoch. A later batch
    // of the producer's next transaction, at that epoch, is out of order until sequence 0 is in
    // (issue 28: appended first, it left the transaction unable to commit).
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    log.append(txn_batch(5, 0, 0, 2), 0, None).unwrap();
    log.append_marker(5, 1, COMMIT, 0, Some(2000)).unwrap();
    let err = log.append(txn_batch(5, 1, 2, 2), 0, None).unwrap_err();
    assert_eq!(err.code, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER");
    log.append(txn_batch(5, 1, 0, 2), 0, None).unwrap();
    log.append(txn_batch(5, 1, 2, 2), 0, None).unwrap();
}
