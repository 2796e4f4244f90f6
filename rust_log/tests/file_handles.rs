//! Bounded file handles: a log with many segments (and many logs) keep at
//! most the cache capacity of descriptors; reads reopen lazily. Its own
//! test binary because the cache is process-wide.
mod common;

use _rust_log::file_cache;
use common::*;

#[test]
fn many_segments_and_logs_stay_within_the_handle_budget() {
    file_cache::set_capacity(8);
    let root = tempfile::tempdir().unwrap();
    let b = simple(1, 1000, 50);
    let c = _rust_log::LogConfig {
        segment_bytes: b.len() as u64,
        index_interval_bytes: 1,
        ..cfg()
    };
    let mut logs = vec![];
    for p in 0..20 {
        let mut log = open(&root.path().join(format!("t-{p}")), c, true);
        for i in 0..10 {
            log.append(simple(1, 1000 + i, 50), 0, None).unwrap();
        }
        assert_eq!(log.segment_base_offsets().len(), 10);
        logs.push(log);
        assert!(file_cache::open_count() <= 8);
    }
    for log in &logs {
        for off in 0..10 {
            assert_eq!(
                batches_in(&log.read(off, 1000, true).unwrap()),
                vec![(off, off)]
            );
            assert!(file_cache::open_count() <= 8);
        }
        assert!(log.open_file_count() <= 8);
    }
    for log in &mut logs {
        log.close().unwrap();
    }
    drop(logs);
    // Reopening 20 logs x 10 segments opens no handle until used.
    let before = file_cache::open_count();
    let logs: Vec<_> = (0..20)
        .map(|p| open(&root.path().join(format!("t-{p}")), c, true))
        .collect();
    assert!(file_cache::open_count() <= before.max(8));
    assert_eq!(logs[3].open_file_count(), 0);
    assert_eq!(
        batches_in(&logs[3].read(5, 1000, true).unwrap()),
        vec![(5, 5)]
    );
    assert_eq!(logs[3].open_file_count(), 1);
}
