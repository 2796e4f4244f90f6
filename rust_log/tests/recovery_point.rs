//! Kafka's recovery point: moved only by flushes; after a crash only the
//! segments holding offsets at or above it are recovered, and a torn tail
//! after it is still cut.
mod common;

use std::fs::OpenOptions;
use std::path::Path;

use _rust_log::PartitionLog;
use common::*;

/// Appends `n` single-record batches to `log` (1 KiB segments hold a few each).
fn append_n(log: &mut PartitionLog, n: i64) {
    for _ in 0..n {
        log.append(simple(1, 1000, 100), 0, None).unwrap();
    }
}

fn recovered_lines(log: &PartitionLog) -> Vec<String> {
    log.recovery_report()
        .iter()
        .filter(|l| l.starts_with("recovered segment"))
        .cloned()
        .collect()
}

fn segments_from(dir: &Path, from: i64) -> usize {
    let mut bases: Vec<i64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log")?.parse().ok()
        })
        .collect();
    bases.sort_unstable();
    // The segment holding `from` and every later one.
    let first = bases.partition_point(|&b| b <= from).saturating_sub(1);
    bases.len() - first
}

#[test]
fn appends_do_not_move_the_recovery_point_flushes_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), small_cfg(1024, 200), true);
    assert_eq!(log.recovery_point(), 0);
    append_n(&mut log, 30);
    assert!(log.segment_base_offsets().len() > 3);
    assert_eq!(log.recovery_point(), 0, "an append is not durable");
    let rolled = log.segment_base_offsets().len() - 1;
    assert_eq!(log.rolled_unflushed_files().unwrap().len(), rolled);
    assert!(log.flush_rolled().unwrap());
    assert!(log.rolled_unflushed_files().unwrap().is_empty());
    assert_eq!(log.recovery_point(), log.active_segment_base_offset());
    assert!(!log.flush_rolled().unwrap(), "nothing rolled since");
    log.flush().unwrap();
    assert_eq!(log.recovery_point(), 30);
    // Truncation (a follower's) pulls it back; a full truncation restarts it.
    log.truncate_to(12).unwrap();
    assert_eq!(log.recovery_point(), 12);
    log.truncate_fully_and_start_at(40).unwrap();
    assert_eq!(log.recovery_point(), 40);
}

#[test]
fn unclean_open_recovers_only_segments_from_the_recovery_point() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1024, 200);
    let mut log = open(dir.path(), c, true);
    append_n(&mut log, 40);
    log.flush_rolled().unwrap();
    let rp = log.recovery_point();
    append_n(&mut log, 40); // rolled again, not flushed
    let leo = log.log_end_offset();
    let total = log.segment_base_offsets().len();
    std::mem::forget(log); // kill -9

    let expected = segments_from(dir.path(), rp);
    assert!(expected > 1 && expected < total, "{expected} of {total}");
    let log = PartitionLog::open_at(dir.path(), c, false, Some(rp)).unwrap();
    assert_eq!(log.log_end_offset(), leo);
    assert_eq!(
        recovered_lines(&log).len(),
        expected,
        "{:?}",
        log.recovery_report()
    );
    assert!(recovered_lines(&log)[0].contains(&format!("recovery point {rp}")));
    assert_eq!(log.recovery_point(), rp, "recovery alone does not flush");
    std::mem::forget(log);

    // Without a recovery point every segment is recovered, as Kafka does.
    let log = PartitionLog::open_at(dir.path(), c, false, None).unwrap();
    assert_eq!(recovered_lines(&log).len(), total);
    std::mem::forget(log);

    // After a clean shutdown nothing is recovered and the point is the end.
    let mut log = PartitionLog::open_at(dir.path(), c, false, Some(rp)).unwrap();
    log.close().unwrap();
    drop(log);
    let log = PartitionLog::open_at(dir.path(), c, true, Some(0)).unwrap();
    assert!(
        log.recovery_report().is_empty(),
        "{:?}",
        log.recovery_report()
    );
    assert_eq!(log.recovery_point(), leo);
}

#[test]
fn recovered_segments_are_flushed_before_the_point_moves_past_them() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1024, 200);
    let mut log = open(dir.path(), c, true);
    append_n(&mut log, 40);
    std::mem::forget(log);
    // Recovered from 0; then more appends roll, and flush_rolled must
    // cover the recovered segments too (they were dirty after recovery).
    let mut log = PartitionLog::open_at(dir.path(), c, false, Some(0)).unwrap();
    append_n(&mut log, 20);
    assert!(log.flush_rolled().unwrap());
    assert_eq!(log.recovery_point(), log.active_segment_base_offset());
}

#[test]
fn torn_tail_after_the_recovery_point_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1024, 200);
    let mut log = open(dir.path(), c, true);
    append_n(&mut log, 40);
    log.flush_rolled().unwrap();
    let rp = log.recovery_point();
    append_n(&mut log, 3);
    let active = log.active_segment_base_offset();
    let leo = log.log_end_offset();
    std::mem::forget(log);
    let path = dir.path().join(format!("{active:020}.log"));
    let len = std::fs::metadata(&path).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 7)
        .unwrap();
    let log = PartitionLog::open_at(dir.path(), c, false, Some(rp)).unwrap();
    assert_eq!(log.log_end_offset(), leo - 1, "{:?}", log.recovery_report());
    assert!(
        log.recovery_report()
            .iter()
            .any(|l| l.contains("truncated"))
    );
}
