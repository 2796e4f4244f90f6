//! Retention by time and size, segment.ms rolling, DeleteRecords and the
//! persisted log start offset.
mod common;

use _rust_log::error::codes;
use _rust_log::log_config::CleanupPolicy;
use common::*;

/// One single-record batch per segment: segment_bytes fits exactly one.
fn one_per_segment(dir: &std::path::Path, n: i64, ts0: i64) -> (_rust_log::PartitionLog, u64) {
    let b = simple(1, ts0, 50);
    let c = _rust_log::LogConfig {
        segment_bytes: b.len() as u64,
        ..cfg()
    };
    let mut log = open(dir, c, true);
    for i in 0..n {
        log.append(simple(1, ts0 + i * 1000, 50), 0, Some(ts0 + i * 1000))
            .unwrap();
    }
    (log, b.len() as u64)
}

#[test]
fn time_retention_deletes_old_closed_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = one_per_segment(dir.path(), 5, 10_000);
    assert_eq!(log.segment_base_offsets(), vec![0, 1, 2, 3, 4]);
    let mut c = *log.config();
    c.retention_ms = 2500;
    c.segment_ms = i64::MAX;
    log.update_config(c).unwrap();
    // now = 15_000: segments with ts 10_000, 11_000, 12_000 are > 2500 old.
    let (n, freed) = log.enforce_retention(15_000).unwrap();
    assert_eq!(n, 3);
    assert!(freed > 0);
    assert_eq!(log.segment_base_offsets(), vec![3, 4]);
    assert_eq!(log.log_start_offset(), 3);
    assert_eq!(
        log.read(2, 1000, true).unwrap_err().code,
        codes::OFFSET_OUT_OF_RANGE
    );
    assert_eq!(batches_in(&log.read(3, 1000, true).unwrap()), vec![(3, 3)]);
    for base in [0i64, 1, 2] {
        assert!(!dir.path().join(format!("{base:020}.log")).exists());
    }
    // Far future: even the active (non-empty) segment goes, after a roll.
    let (n, _) = log.enforce_retention(1_000_000).unwrap();
    assert_eq!(n, 2);
    assert_eq!(log.log_start_offset(), 5);
    assert_eq!(log.log_end_offset(), 5);
    assert_eq!(log.segment_base_offsets(), vec![5]);
    // Empty active segment is never deleted.
    assert_eq!(log.enforce_retention(2_000_000).unwrap(), (0, 0));
    let r = log.append(simple(1, 5, 50), 0, None).unwrap();
    assert_eq!(r.base_offset, 5);
    log.close().unwrap();
    drop(log);
    let log = open(dir.path(), cfg(), true);
    assert_eq!(log.log_start_offset(), 5);
    assert_eq!(log.log_end_offset(), 6);
}

#[test]
fn size_retention_keeps_at_least_retention_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, seg) = one_per_segment(dir.path(), 5, 10_000);
    let mut c = *log.config();
    c.retention_bytes = (2 * seg + 1) as i64;
    c.retention_ms = -1;
    log.update_config(c).unwrap();
    // total 5 segs; keep >= 2*seg+1 bytes => keep 3 segments.
    assert_eq!(log.enforce_retention(20_000).unwrap(), (2, 2 * seg));
    assert_eq!(log.segment_base_offsets(), vec![2, 3, 4]);
    assert_eq!(log.enforce_retention(20_000).unwrap(), (0, 0));
}

#[test]
fn compact_only_policy_ignores_time_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = one_per_segment(dir.path(), 3, 10_000);
    let mut c = *log.config();
    c.cleanup_policy = CleanupPolicy::parse("compact").unwrap();
    c.retention_ms = 1;
    c.retention_bytes = 0;
    log.update_config(c).unwrap();
    assert_eq!(log.enforce_retention(1 << 40).unwrap(), (0, 0));
}

#[test]
fn segment_ms_rolls_on_append_and_on_maybe_roll() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        segment_ms: 1000,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    assert!(
        !log.maybe_roll(1 << 40).unwrap(),
        "empty segment never rolls"
    );
    log.append(simple(1, 5000, 10), 0, None).unwrap();
    log.append(simple(1, 5900, 10), 0, None).unwrap();
    assert_eq!(log.segment_base_offsets(), vec![0]);
    log.append(simple(1, 6001, 10), 0, None).unwrap();
    assert_eq!(log.segment_base_offsets(), vec![0, 2]);
    assert!(!log.maybe_roll(6500).unwrap());
    assert!(log.maybe_roll(7002).unwrap());
    assert_eq!(log.segment_base_offsets(), vec![0, 2, 3]);
    assert_eq!(log.log_end_offset(), 3);
    // Reopen: the first batch timestamp of the active segment is reloaded.
    log.append(simple(1, 8000, 10), 0, None).unwrap();
    log.close().unwrap();
    drop(log);
    let mut log = open(dir.path(), c, true);
    assert!(!log.maybe_roll(8500).unwrap());
    assert!(log.maybe_roll(9001).unwrap());
}

#[test]
fn delete_records_moves_log_start_and_persists() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(400, 100);
    let mut log = open(dir.path(), c, true);
    for i in 0..20 {
        log.append(simple(1, 1000 + i, 50), 0, None).unwrap();
    }
    let segs = log.segment_base_offsets();
    assert!(segs.len() > 3, "{segs:?}");
    // Mid-segment.
    let target = segs[2] + 1;
    assert_eq!(log.delete_records(target).unwrap(), target);
    assert_eq!(log.log_start_offset(), target);
    assert_eq!(log.segment_base_offsets()[0], segs[2]);
    assert_eq!(
        log.read(target - 1, 100, true).unwrap_err().code,
        codes::OFFSET_OUT_OF_RANGE
    );
    assert_eq!(
        batches_in(&log.read(target, 100, true).unwrap()),
        vec![(target, target)]
    );
    assert_eq!(
        log.offset_for_timestamp(0).unwrap(),
        Some((target, 1000 + target))
    );
    // Lower offsets change nothing.
    assert_eq!(log.delete_records(1).unwrap(), target);
    // Beyond the end.
    let e = log.delete_records(21).unwrap_err();
    assert_eq!(e.code, codes::OFFSET_OUT_OF_RANGE);
    // Survives a crash (no close).
    std::mem::forget(log);
    let mut log = open(dir.path(), c, false);
    assert_eq!(log.log_start_offset(), target);
    // -1 = high watermark: everything goes, appends continue.
    assert_eq!(log.delete_records(-1).unwrap(), 20);
    assert_eq!(log.log_start_offset(), 20);
    assert_eq!(log.segment_base_offsets(), vec![20]);
    assert_eq!(log.read(20, 100, true).unwrap(), Vec::<u8>::new());
    assert_eq!(
        log.append(simple(1, 1, 5), 0, None).unwrap().base_offset,
        20
    );
    log.close().unwrap();
    drop(log);
    let log = open(dir.path(), c, true);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (20, 21));
}

#[test]
fn deleted_segment_stays_readable_for_a_reader_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = one_per_segment(dir.path(), 3, 10_000);
    let plan = log.read_plan(0, 1000, true).unwrap();
    log.delete_records(2).unwrap();
    assert!(!dir.path().join(format!("{:020}.log", 0)).exists());
    let mut buf = vec![0u8; plan.len];
    let n = plan.read_into(&mut buf).unwrap();
    assert_eq!(batches_in(&buf[..n]), vec![(0, 0)]);
}
