//! flush.messages / flush.ms, live config updates, and recovery from
//! corruption in the middle of a segment.
mod common;

use std::io::{Seek, SeekFrom, Write};

use _rust_log::error::codes;
use common::*;

#[test]
fn flush_messages_fsyncs_every_n_messages() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        flush_messages: 3,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    log.append(simple(2, 1, 10), 0, None).unwrap();
    assert_eq!(log.unflushed_messages(), 2);
    log.append(simple(1, 1, 10), 0, None).unwrap();
    assert_eq!(log.unflushed_messages(), 0, "flushed at 3 messages");
    let mut c1 = c;
    c1.flush_messages = 1;
    log.update_config(c1).unwrap();
    log.append(simple(5, 1, 10), 0, None).unwrap();
    assert_eq!(log.unflushed_messages(), 0);
}

#[test]
fn flush_if_due_follows_flush_ms() {
    let dir = tempfile::tempdir().unwrap();
    let c = _rust_log::LogConfig {
        flush_ms: 1000,
        ..cfg()
    };
    let mut log = open(dir.path(), c, true);
    let now = _rust_log::partition_log::now_ms();
    assert!(!log.flush_if_due(now + 10_000).unwrap(), "nothing to flush");
    log.append(simple(1, 1, 10), 0, None).unwrap();
    assert!(!log.flush_if_due(now + 10).unwrap());
    assert!(log.flush_if_due(now + 10_000).unwrap());
    assert_eq!(log.unflushed_messages(), 0);
    assert!(!log.flush_if_due(now + 20_000).unwrap());
}

#[test]
fn bad_config_updates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), cfg(), true);
    let mut c = cfg();
    c.min_cleanable_dirty_ratio = 1.5;
    assert_eq!(
        log.update_config(c).unwrap_err().code,
        codes::INVALID_CONFIG
    );
    let mut c = cfg();
    c.flush_messages = 0;
    assert_eq!(
        log.update_config(c).unwrap_err().code,
        codes::INVALID_CONFIG
    );
    assert_eq!(log.config().flush_messages, i64::MAX);
}

#[test]
fn corruption_in_the_middle_of_segments_cuts_there() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1000, 100);
    let mut log = open(dir.path(), c, true);
    let size = simple(1, 0, 50).len() as u64;
    for i in 0..30 {
        log.append(simple(1, 1000 + i, 50), 0, None).unwrap();
    }
    let segs = log.segment_base_offsets();
    assert!(segs.len() >= 3);
    std::mem::forget(log);
    // Corrupt the 3rd batch of the active segment (a CRC-covered byte).
    let active = *segs.last().unwrap();
    let path = dir.path().join(format!("{active:020}.log"));
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.seek(SeekFrom::Start(2 * size + 70)).unwrap();
    f.write_all(b"XX").unwrap();
    drop(f);
    let log = open(dir.path(), c, false);
    assert_eq!(
        log.log_end_offset(),
        active + 2,
        "{:?}",
        log.recovery_report()
    );
    assert!(
        log.recovery_report()
            .iter()
            .any(|l| l.contains("truncated"))
    );
    for off in 0..active + 2 {
        assert_eq!(
            batches_in(&log.read(off, 1, true).unwrap()),
            vec![(off, off)]
        );
    }
    drop(log);
    // Tear a middle segment inside its 3rd batch: it is cut back to two
    // batches and every later segment is deleted.
    let mid = segs[1];
    let path = dir.path().join(format!("{mid:020}.log"));
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(2 * size + 30).unwrap();
    drop(f);
    let log = open(dir.path(), c, true);
    assert_eq!(log.log_end_offset(), mid + 2, "{:?}", log.recovery_report());
    assert!(
        log.recovery_report()
            .iter()
            .any(|l| l.contains("deleted segment"))
    );
    assert_eq!(log.segment_base_offsets(), segs[..2].to_vec());
}
