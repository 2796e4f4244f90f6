//! Log compaction: newest value per key, tombstone lifetime, dirty ratio,
//! compaction lag, producer state, and crash safety of the segment swap.
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use _rust_log::error::codes;
use _rust_log::log_config::CleanupPolicy;
use _rust_log::{LogConfig, PartitionLog, cleaner};
use common::*;

type Newest = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

fn compact_cfg(segment_bytes: u64) -> LogConfig {
    LogConfig {
        segment_bytes,
        index_interval_bytes: 64,
        cleanup_policy: CleanupPolicy::parse("compact").unwrap(),
        min_cleanable_dirty_ratio: 0.0,
        delete_retention_ms: 1000,
        ..cfg()
    }
}

fn put(log: &mut PartitionLog, ts: i64, key: &str, value: Option<&str>) -> i64 {
    let b = build(&BatchSpec::new(vec![keyed(ts, key, value)]));
    log.append(b, 0, Some(ts)).unwrap().base_offset
}

fn newest(log: &PartitionLog) -> Newest {
    let mut m = BTreeMap::new();
    for g in all_records(log) {
        m.insert(g.key.unwrap(), g.value);
    }
    m
}

/// Writes 300 updates over 10 keys (plus a multi-record gzip batch), keeps
/// the expected newest values.
fn fill(log: &mut PartitionLog) -> Newest {
    let mut expect = BTreeMap::new();
    for i in 0..300i64 {
        let k = format!("k{}", i % 10);
        let v = format!("v{i}");
        put(log, 1000 + i, &k, Some(&v));
        expect.insert(k.into_bytes(), Some(v.into_bytes()));
    }
    let recs = vec![
        keyed(2000, "k1", Some("gz1")),
        keyed(2001, "k2", Some("gz2")),
        keyed(2002, "k1", Some("gz1b")),
    ];
    log.append(build(&BatchSpec::new(recs).codec(1)), 0, Some(2002))
        .unwrap();
    expect.insert(b"k1".to_vec(), Some(b"gz1b".to_vec()));
    expect.insert(b"k2".to_vec(), Some(b"gz2".to_vec()));
    expect
}

#[test]
fn compaction_keeps_exactly_the_newest_value_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let c = compact_cfg(2000);
    let mut log = open(dir.path(), c, true);
    let expect = fill(&mut log);
    // Active segment content is not cleaned: roll so everything is closed.
    assert!(log.maybe_roll(1 << 40).unwrap());
    let before_segments = log.segment_base_offsets().len();
    let leo = log.log_end_offset();
    let size_before = log.size_bytes();
    let stats = log.clean(5000).unwrap().expect("cleaning due");
    assert!(stats.records_removed >= 290, "{stats:?}");
    assert!(stats.bytes_after < stats.bytes_before);
    assert!(log.size_bytes() < size_before);
    assert!(log.segment_base_offsets().len() <= before_segments);
    let got = all_records(&log);
    assert_eq!(got.len(), expect.len(), "{got:?}");
    assert_eq!(newest(&log), expect);
    // Offsets preserved and increasing; end unchanged.
    assert!(got.windows(2).all(|w| w[0].offset < w[1].offset));
    assert_eq!(log.log_end_offset(), leo);
    assert_eq!(got.last().unwrap().offset, leo - 1);
    // Nothing dirty any more.
    assert_eq!(log.clean(6000).unwrap(), None);
    assert_eq!(log.cleaner_checkpoint(), Some(leo));
    // A second pass groups the now small cleaned segments into one.
    let small_segments = log.segment_base_offsets().len();
    put(&mut log, 6500, "k4", Some("again"));
    log.maybe_roll(1 << 40).unwrap();
    log.clean(6600).unwrap().expect("due");
    assert!(
        log.segment_base_offsets().len() < small_segments,
        "{:?}",
        log.segment_base_offsets()
    );
    let mut expect = expect;
    expect.insert(b"k4".to_vec(), Some(b"again".to_vec()));
    let leo = log.log_end_offset();
    // Appends continue; reopen (clean and unclean) keeps the result.
    put(&mut log, 7000, "k3", Some("late"));
    log.close().unwrap();
    drop(log);
    let log = open(dir.path(), c, false);
    let mut e2 = expect.clone();
    e2.insert(b"k3".to_vec(), Some(b"late".to_vec()));
    assert_eq!(newest(&log), e2);
    assert_eq!(log.cleaner_checkpoint(), Some(leo));
    for line in log.recovery_report() {
        assert!(!line.contains("truncated"), "{line}");
    }
}

#[test]
fn tombstones_live_for_delete_retention_after_first_cleaning() {
    let dir = tempfile::tempdir().unwrap();
    let c = compact_cfg(1 << 20);
    let mut log = open(dir.path(), c, true);
    put(&mut log, 100, "a", Some("1"));
    put(&mut log, 101, "b", Some("1"));
    put(&mut log, 102, "a", None);
    log.maybe_roll(1 << 40).unwrap();
    let t0 = 10_000;
    log.clean(t0).unwrap().expect("due");
    let got = all_records(&log);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].key.as_deref(), Some(&b"b"[..]));
    assert_eq!(
        (got[1].key.as_deref(), got[1].value.clone()),
        (Some(&b"a"[..]), None)
    );
    // Record timestamps survive the delete-horizon re-basing.
    assert_eq!(got[1].timestamp, 102);
    // Not yet expired: nothing to do.
    assert_eq!(log.clean(t0 + 999).unwrap(), None);
    // Expired (horizon = t0 + delete_retention_ms): the tombstone goes,
    // even with no new dirty data, and after a restart too.
    log.close().unwrap();
    drop(log);
    let mut log = open(dir.path(), c, true);
    let stats = log.clean(t0 + 1000).unwrap().expect("expired tombstone");
    assert_eq!(stats.records_removed, 1);
    let got = all_records(&log);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].key.as_deref(), Some(&b"b"[..]));
}

#[test]
fn dirty_ratio_and_compaction_lag_gate_cleaning() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = compact_cfg(1 << 20);
    c.min_cleanable_dirty_ratio = 0.5;
    let mut log = open(dir.path(), c, true);
    for i in 0..20 {
        put(&mut log, 1000 + i, &format!("k{i}"), Some("x"));
    }
    log.maybe_roll(1 << 40).unwrap();
    log.clean(5000).unwrap().expect("all dirty");
    // A small dirty segment after a big clean one: ratio below 0.5.
    put(&mut log, 6000, "k0", Some("y"));
    log.maybe_roll(1 << 40).unwrap();
    assert_eq!(log.clean(7000).unwrap(), None);
    // max.compaction.lag.ms forces it.
    let mut c2 = c;
    c2.max_compaction_lag_ms = 500;
    log.update_config(c2).unwrap();
    let s = log.clean(7000).unwrap().expect("lag due");
    assert_eq!(s.records_removed, 1);
    // min.compaction.lag.ms holds back young records.
    put(&mut log, 8000, "k1", Some("z"));
    log.maybe_roll(1 << 40).unwrap();
    let mut c3 = c;
    c3.min_cleanable_dirty_ratio = 0.0;
    c3.min_compaction_lag_ms = 10_000;
    log.update_config(c3).unwrap();
    assert_eq!(log.clean(9000).unwrap(), None);
    assert!(log.clean(18_001).unwrap().is_some());
}

#[test]
fn keyless_records_are_rejected_on_compacted_topics() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), compact_cfg(1 << 20), true);
    for codec in 0..=4u8 {
        let b = build(
            &BatchSpec::new(vec![keyed(1, "k", Some("v")), Rec::new(2, b"nokey")]).codec(codec),
        );
        let e = log.append(b, 0, None).unwrap_err();
        assert_eq!(e.code, codes::INVALID_RECORD, "codec {codec}");
        assert!(
            e.message
                .contains("Compacted topic cannot accept message without key")
        );
        // KIP-467: the keyless record is named by its index in the batch, with the partition.
        let dir_name = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            e.record_errors,
            vec![(
                1,
                format!(
                    "Compacted topic cannot accept message without key in topic partition {dir_name}"
                )
            )],
            "codec {codec}"
        );
    }
    assert_eq!(log.log_end_offset(), 0);
    // The same batch is fine on a delete topic.
    let mut c = *log.config();
    c.cleanup_policy = CleanupPolicy::parse("delete").unwrap();
    log.update_config(c).unwrap();
    log.append(build(&BatchSpec::new(vec![Rec::new(2, b"nokey")])), 0, None)
        .unwrap();
}

#[test]
fn producer_last_batch_survives_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let c = compact_cfg(1 << 20);
    let mut log = open(dir.path(), c, true);
    let b = build(&BatchSpec::new(vec![keyed(1, "a", Some("old"))]).producer(7, 0, 0));
    log.append(b, 0, Some(1)).unwrap();
    put(&mut log, 2, "a", Some("new"));
    log.maybe_roll(1 << 40).unwrap();
    let s = log.clean(100).unwrap().unwrap();
    assert_eq!(s.records_removed, 1);
    // The producer's (now empty) batch is still there; its sequence state
    // survives a restart without snapshot.
    std::mem::forget(log);
    let mut log = open(dir.path(), c, false);
    let next = build(&BatchSpec::new(vec![keyed(3, "b", Some("x"))]).producer(7, 0, 1));
    assert!(!log.append(next.clone(), 0, Some(3)).unwrap().duplicate);
    assert!(log.append(next, 0, Some(3)).unwrap().duplicate);
    let gap = build(&BatchSpec::new(vec![keyed(3, "b", Some("x"))]).producer(7, 0, 5));
    assert_eq!(
        log.append(gap, 0, None).unwrap_err().code,
        codes::OUT_OF_ORDER_SEQUENCE_NUMBER
    );
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Builds a compactable log, runs a cleaning pass up to its `.cleaned`
/// output without installing it, and "crashes" (forgets the log).
fn crashed_mid_clean(dir: &Path) -> (LogConfig, Newest, i64) {
    let c = compact_cfg(2000);
    let mut log = open(dir, c, true);
    let expect = fill(&mut log);
    log.maybe_roll(1 << 40).unwrap();
    log.flush().unwrap();
    let leo = log.log_end_offset();
    let plan = log.prepare_clean(5000).unwrap().unwrap();
    let out = cleaner::run(&plan, usize::MAX).unwrap();
    assert!(out.groups.len() >= 2);
    std::mem::forget(out);
    std::mem::forget(log);
    (c, expect, leo)
}

fn rename_suffix(dir: &Path, from: &str, to: &str, only_log: bool) {
    for n in names(dir) {
        if let Some(stem) = n.strip_suffix(from) {
            if only_log && !stem.ends_with(".log") {
                continue;
            }
            std::fs::rename(dir.join(&n), dir.join(format!("{stem}{to}"))).unwrap();
        }
    }
}

#[test]
fn crash_before_swap_commit_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let (c, expect, leo) = crashed_mid_clean(dir.path());
    assert!(names(dir.path()).iter().any(|n| n.ends_with(".cleaned")));
    // Also an index renamed to .swap without its log: not committed.
    let idx = names(dir.path())
        .into_iter()
        .find(|n| n.ends_with(".index.cleaned"))
        .unwrap();
    let stem = idx.strip_suffix(".cleaned").unwrap().to_string();
    std::fs::rename(
        dir.path().join(&idx),
        dir.path().join(format!("{stem}.swap")),
    )
    .unwrap();
    let log = open(dir.path(), c, false);
    let left = names(dir.path());
    assert!(
        !left
            .iter()
            .any(|n| n.ends_with(".cleaned") || n.ends_with(".swap")),
        "{left:?}"
    );
    assert_eq!(log.log_end_offset(), leo);
    assert_eq!(newest(&log), expect);
    assert_eq!(all_records(&log).len() as i64, leo, "nothing was compacted");
}

#[test]
fn crash_after_swap_commit_completes() {
    for delete_old in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (c, expect, leo) = crashed_mid_clean(dir.path());
        // Commit point for every group: range file + log renamed to .swap.
        let cleaned: Vec<String> = names(dir.path())
            .into_iter()
            .filter(|n| n.ends_with(".log.cleaned"))
            .collect();
        let mut bases: Vec<i64> = cleaned.iter().map(|n| n[..20].parse().unwrap()).collect();
        bases.sort();
        let mut all_bases: Vec<i64> = names(dir.path())
            .iter()
            .filter(|n| n.ends_with(".log"))
            .map(|n| n[..20].parse().unwrap())
            .collect();
        all_bases.sort();
        let active_base = *all_bases.last().unwrap();
        for (i, b) in bases.iter().enumerate() {
            let end = bases.get(i + 1).copied().unwrap_or(active_base);
            _rust_log::offset_checkpoint::write(dir.path(), &format!("{b:020}.swaprange"), end)
                .unwrap();
        }
        rename_suffix(dir.path(), ".cleaned", ".swap", false);
        if delete_old {
            // Old segments already partly deleted.
            for b in &all_bases[1..all_bases.len() - 1] {
                let _ = std::fs::remove_file(dir.path().join(format!("{b:020}.log")));
            }
        }
        let log = open(dir.path(), c, false);
        let left = names(dir.path());
        assert!(!left.iter().any(|n| n.contains(".swap")), "{left:?}");
        assert!(
            log.recovery_report()
                .iter()
                .any(|l| l.contains("completed interrupted cleaner swap")),
            "{:?}",
            log.recovery_report()
        );
        assert_eq!(log.log_end_offset(), leo);
        assert_eq!(newest(&log), expect);
        assert_eq!(all_records(&log).len(), expect.len());
    }
}

#[test]
fn cleaning_aborts_if_segments_changed_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = compact_cfg(2000);
    c.cleanup_policy = CleanupPolicy::parse("compact,delete").unwrap();
    let mut log = open(dir.path(), c, true);
    let _ = fill(&mut log);
    log.maybe_roll(1 << 40).unwrap();
    let plan = log.prepare_clean(5000).unwrap().unwrap();
    let out = cleaner::run(&plan, usize::MAX).unwrap();
    // DeleteRecords removed the first segment during the pass.
    let second = log.segment_base_offsets()[1];
    log.delete_records(second).unwrap();
    assert_eq!(log.finish_clean(out).unwrap(), None);
    assert!(!names(dir.path()).iter().any(|n| n.ends_with(".cleaned")));
    assert!(log.clean(5000).unwrap().is_some());
}

#[test]
fn a_small_offset_map_cleans_the_dirty_range_over_several_passes() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), compact_cfg(2000), true);
    // 200 distinct keys, then each written again: half of the records are superseded.
    let mut expect = BTreeMap::new();
    for round in 0..2 {
        for i in 0..200i64 {
            let (k, v) = (format!("key-{i:04}"), format!("v{round}-{i}"));
            put(&mut log, 1000 + round * 1000 + i, &k, Some(&v));
            expect.insert(k.into_bytes(), Some(v.into_bytes()));
        }
    }
    assert!(log.maybe_roll(1 << 40).unwrap());
    let leo = log.log_end_offset();
    // Room for 50 keys of 8 bytes a pass: the map fills, the pass stops there, the next goes on.
    let budget = 50 * (8 + cleaner::MAP_ENTRY_OVERHEAD);
    let mut passes = 0;
    let mut checkpoints = Vec::new();
    while let Some(stats) = log.clean_within(5000, budget).unwrap() {
        passes += 1;
        checkpoints.push(log.cleaner_checkpoint().unwrap());
        assert!(stats.segments > 0, "{stats:?}");
        assert!(passes < 100, "no progress: {checkpoints:?}");
    }
    assert!(passes >= 8, "{passes} passes: {checkpoints:?}");
    assert!(
        checkpoints.windows(2).all(|w| w[0] < w[1]),
        "{checkpoints:?}"
    );
    assert_eq!(log.cleaner_checkpoint(), Some(leo));
    // The same result as one unbounded pass: exactly the newest value of every key.
    assert_eq!(newest(&log), expect);
    assert_eq!(all_records(&log).len(), 200);
}
