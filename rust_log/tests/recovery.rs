//! Crash recovery: torn tails, garbage, CRC corruption, corrupt middle
//! segments, preallocated and broken index files.
mod common;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use common::*;

fn seg_file(dir: &Path, base: i64, ext: &str) -> std::path::PathBuf {
    dir.join(format!("{base:020}.{ext}"))
}

/// Writes `n` single-record batches with growing timestamps and drops the
/// log without closing it (as a kill -9 would). Returns batch size.
fn fill(dir: &Path, c: _rust_log::LogConfig, n: i64) -> usize {
    let mut log = open(dir, c, true);
    let mut size = 0;
    for i in 0..n {
        let b = simple(1, 1000 + i, 50);
        size = b.len();
        log.append(b, 0, None).unwrap();
    }
    std::mem::forget(log);
    size
}

fn assert_healthy(dir: &Path, c: _rust_log::LogConfig, expected_leo: i64) {
    let mut log = open(dir, c, false);
    assert_eq!(
        log.log_end_offset(),
        expected_leo,
        "report: {:?}",
        log.recovery_report()
    );
    for off in 0..expected_leo {
        assert_eq!(
            batches_in(&log.read(off, 1, true).unwrap()),
            vec![(off, off)]
        );
        assert_eq!(
            log.offset_for_timestamp(1000 + off).unwrap(),
            Some((off, 1000 + off))
        );
    }
    let r = log.append(simple(1, 5000, 50), 0, None).unwrap();
    assert_eq!(r.base_offset, expected_leo);
    assert_eq!(
        batches_in(&log.read(expected_leo, 1 << 20, true).unwrap()),
        vec![(expected_leo, expected_leo)]
    );
    log.close().unwrap();
    drop(log);
    let log = open(dir, c, true);
    assert_eq!(log.log_end_offset(), expected_leo + 1);
    assert!(
        log.recovery_report().is_empty(),
        "{:?}",
        log.recovery_report()
    );
}

#[test]
fn unclean_open_of_intact_log_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1 << 20, 200);
    fill(dir.path(), c, 20);
    let log = open(dir.path(), c, false);
    assert_eq!(log.log_end_offset(), 20);
    assert_eq!(log.recovery_report().len(), 1);
    assert!(!log.recovery_report()[0].contains("truncated"));
    drop(log);
    assert_healthy(dir.path(), c, 20);
}

#[test]
fn torn_tail_mid_batch() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1 << 20, 200);
    let size = fill(dir.path(), c, 20);
    let f = OpenOptions::new()
        .write(true)
        .open(seg_file(dir.path(), 0, "log"))
        .unwrap();
    f.set_len((size * 20 - 7) as u64).unwrap();
    let log = open(dir.path(), c, false);
    assert_eq!(log.log_end_offset(), 19);
    assert!(
        log.recovery_report()[0].contains("truncated"),
        "{:?}",
        log.recovery_report()
    );
    assert_eq!(log.size_bytes(), (size * 19) as u64);
    drop(log);
    assert_healthy(dir.path(), c, 19);
}

#[test]
fn garbage_after_last_batch() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1 << 20, 200);
    let size = fill(dir.path(), c, 10);
    let mut f = OpenOptions::new()
        .append(true)
        .open(seg_file(dir.path(), 0, "log"))
        .unwrap();
    f.write_all(&[
        0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
    ])
    .unwrap();
    f.write_all(&vec![0u8; 4096]).unwrap();
    drop(f);
    let log = open(dir.path(), c, false);
    assert_eq!(log.log_end_offset(), 10);
    assert_eq!(log.size_bytes(), (size * 10) as u64);
    drop(log);
    assert_healthy(dir.path(), c, 10);
}

#[test]
fn corrupt_crc_in_last_batch() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1 << 20, 200);
    let size = fill(dir.path(), c, 10);
    let path = seg_file(dir.path(), 0, "log");
    let mut data = std::fs::read(&path).unwrap();
    let last = data.len() - 3;
    data[last] ^= 0x55;
    std::fs::write(&path, &data).unwrap();
    let log = open(dir.path(), c, false);
    assert_eq!(log.log_end_offset(), 9);
    assert_eq!(log.size_bytes(), (size * 9) as u64);
    assert!(
        log.recovery_report()[0].contains("CRC"),
        "{:?}",
        log.recovery_report()
    );
    drop(log);
    assert_healthy(dir.path(), c, 9);
}

#[test]
fn corrupt_middle_segment_drops_later_segments() {
    let dir = tempfile::tempdir().unwrap();
    let one = simple(1, 0, 50).len();
    let c = small_cfg((one * 5) as u64, (one * 2) as u64);
    fill(dir.path(), c, 20);
    {
        let log = open(dir.path(), c, true);
        assert_eq!(log.segment_base_offsets(), vec![0, 5, 10, 15]);
    }
    // Corrupt the CRC of the 3rd batch of segment 5 and lose its index.
    let path = seg_file(dir.path(), 5, "log");
    let mut data = std::fs::read(&path).unwrap();
    data[one * 2 + 70] ^= 0x01;
    std::fs::write(&path, &data).unwrap();
    std::fs::remove_file(seg_file(dir.path(), 5, "index")).unwrap();
    let log = open(dir.path(), c, false);
    assert_eq!(log.segment_base_offsets(), vec![0, 5]);
    assert_eq!(log.log_end_offset(), 7);
    let report = log.recovery_report().join("\n");
    assert!(report.contains("deleted segment"), "{report}");
    assert!(!seg_file(dir.path(), 10, "log").exists());
    assert!(!seg_file(dir.path(), 15, "index").exists());
    drop(log);
    assert_healthy(dir.path(), c, 7);
}

#[test]
fn middle_segment_shorter_than_its_index_detected_on_clean_open() {
    let dir = tempfile::tempdir().unwrap();
    let one = simple(1, 0, 50).len();
    let c = small_cfg((one * 5) as u64, 0);
    {
        let mut log = open(dir.path(), c, true);
        for i in 0..15 {
            log.append(simple(1, 1000 + i, 50), 0, None).unwrap();
        }
        log.close().unwrap();
    }
    let f = OpenOptions::new()
        .write(true)
        .open(seg_file(dir.path(), 5, "log"))
        .unwrap();
    f.set_len((one * 2 + 10) as u64).unwrap();
    let log = open(dir.path(), c, true);
    assert_eq!(log.segment_base_offsets(), vec![0, 5]);
    assert_eq!(log.log_end_offset(), 7);
    drop(log);
    assert_healthy(dir.path(), c, 7);
}

#[test]
fn preallocated_index_files_are_recognised_and_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1 << 20, 200);
    {
        let mut log = open(dir.path(), c, true);
        for i in 0..20 {
            log.append(simple(1, 1000 + i, 50), 0, None).unwrap();
        }
        log.close().unwrap();
    }
    let idx = seg_file(dir.path(), 0, "index");
    let tidx = seg_file(dir.path(), 0, "timeindex");
    let (ilen, tlen) = (
        std::fs::metadata(&idx).unwrap().len(),
        std::fs::metadata(&tidx).unwrap().len(),
    );
    assert!(ilen > 0 && tlen > 0);
    // Pad like Kafka's preallocation (10 MiB index files full of zeros).
    for p in [&idx, &tidx] {
        OpenOptions::new()
            .write(true)
            .open(p)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
    }
    let mut log = open(dir.path(), c, true);
    assert!(
        log.recovery_report().is_empty(),
        "{:?}",
        log.recovery_report()
    );
    assert_eq!(std::fs::metadata(&idx).unwrap().len(), ilen);
    assert_eq!(std::fs::metadata(&tidx).unwrap().len(), tlen);
    assert_eq!(log.log_end_offset(), 20);
    assert_eq!(log.offset_for_timestamp(1013).unwrap(), Some((13, 1013)));
    log.append(simple(1, 2000, 50), 0, None).unwrap();
    log.close().unwrap();
    drop(log);
    // A crash with preallocated files (unclean) is also fine.
    for p in [&idx, &tidx] {
        OpenOptions::new()
            .write(true)
            .open(p)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
    }
    let log = open(dir.path(), c, false);
    assert_eq!(log.log_end_offset(), 21);
    assert_eq!(log.offset_for_timestamp(1013).unwrap(), Some((13, 1013)));
}

#[test]
fn garbage_index_triggers_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cfg(1 << 20, 200);
    {
        let mut log = open(dir.path(), c, true);
        for i in 0..20 {
            log.append(simple(1, 1000 + i, 50), 0, None).unwrap();
        }
        log.close().unwrap();
    }
    std::fs::write(seg_file(dir.path(), 0, "index"), [0xffu8; 24]).unwrap();
    std::fs::write(seg_file(dir.path(), 0, "timeindex"), [1u8; 13]).unwrap();
    let log = open(dir.path(), c, true);
    assert_eq!(
        log.recovery_report().len(),
        1,
        "{:?}",
        log.recovery_report()
    );
    drop(log);
    assert_healthy(dir.path(), c, 20);
}

#[test]
fn orphan_and_temp_files_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let c = cfg();
    fill(dir.path(), c, 3);
    std::fs::write(seg_file(dir.path(), 77, "index"), [0u8; 8]).unwrap();
    std::fs::write(dir.path().join("00000000000000000003.snapshot.tmp"), b"x").unwrap();
    let log = open(dir.path(), c, false);
    assert!(!seg_file(dir.path(), 77, "index").exists());
    assert!(
        !dir.path()
            .join("00000000000000000003.snapshot.tmp")
            .exists()
    );
    assert_eq!(log.log_end_offset(), 3);
}

#[test]
fn empty_directory_and_missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("topic-0");
    let log = open(&p, cfg(), false);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (0, 0));
    assert_eq!(log.segment_base_offsets(), vec![0]);
    assert!(seg_file(&p, 0, "log").exists());
}

const EPOCHS: &str = "leader-epoch-checkpoint";

#[test]
fn new_log_has_no_epoch_checkpoint_until_an_epoch_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    // A missing log dir (deeper than one level) is created too.
    let p = dir.path().join("logs").join("topic-0");
    let mut log = open(&p, cfg(), true);
    assert!(
        !p.join(EPOCHS).exists(),
        "an empty checkpoint is not written at creation"
    );
    log.append(simple(1, 0, 1), 0, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(p.join(EPOCHS)).unwrap(),
        "0\n1\n0 0\n"
    );
    log.append(simple(1, 0, 1), 2, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(p.join(EPOCHS)).unwrap(),
        "0\n2\n0 0\n2 1\n"
    );
    // Killed: what was written without an fsync is in the page cache.
    std::mem::forget(log);
    let log = open(&p, cfg(), false);
    assert_eq!(log.leader_epochs(), &[(0, 0), (2, 1)]);
}

#[test]
fn checkpoint_lost_in_a_power_cut_is_rederived_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let mut log = open(p, cfg(), true);
    log.append(simple(2, 0, 1), 1, None).unwrap(); // 0-1 epoch 1
    log.close().unwrap(); // producer snapshot at 2, checkpoint fsynced
    drop(log);
    let durable = std::fs::read_to_string(p.join(EPOCHS)).unwrap();
    assert_eq!(durable, "0\n1\n1 0\n");

    let mut log = open(p, cfg(), true);
    log.append(simple(2, 0, 1), 3, None).unwrap(); // 2-3 epoch 3, checkpoint not fsynced
    log.append(simple(1, 0, 1), 4, None).unwrap(); // 4 epoch 4
    std::mem::forget(log);
    // A power cut keeps the log (say its data had been written back) but
    // loses the unsynced checkpoint rewrite: the fsynced version is back.
    std::fs::write(p.join(EPOCHS), &durable).unwrap();
    let log = open(p, cfg(), false);
    assert_eq!(log.leader_epochs(), &[(1, 0), (3, 2), (4, 4)]);
    assert_eq!(log.end_offset_for_epoch(3).unwrap(), (3, 4));
    drop(log);

    // Or the rewrite was cut short: an empty or torn file rebuilds from the
    // log start.
    for torn in ["", "0\n3\n1 0\n3 2\n"] {
        std::fs::write(p.join(EPOCHS), torn).unwrap();
        let mut log = open(p, cfg(), false);
        assert_eq!(
            log.leader_epochs(),
            &[(1, 0), (3, 2), (4, 4)],
            "from {torn:?}"
        );
        log.close().unwrap();
        assert_eq!(
            std::fs::read_to_string(p.join(EPOCHS)).unwrap(),
            "0\n3\n1 0\n3 2\n4 4\n"
        );
    }
}

#[test]
fn new_log_flushes_and_reopens_with_its_data() {
    // flush.messages=1 on a new log: the first flush is the one that makes
    // the directory entries durable (counted in tests_py with strace); here,
    // the data it flushed is all there after a kill.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t-0");
    let c = _rust_log::LogConfig {
        flush_messages: 1,
        ..cfg()
    };
    let mut log = open(&p, c, true);
    for _ in 0..3 {
        log.append(simple(1, 0, 10), 0, None).unwrap();
        assert_eq!(log.unflushed_messages(), 0);
    }
    std::mem::forget(log);
    let log = open(&p, c, false);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.leader_epochs(), &[(0, 0)]);
}

#[test]
fn index_files_of_a_new_segment_are_created_when_first_needed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t-0");
    let indexes = |p: &Path| [seg_file(p, 0, "index"), seg_file(p, 0, "timeindex")];
    let log = open(&p, cfg(), true);
    assert!(seg_file(&p, 0, "log").exists());
    assert!(indexes(&p).iter().all(|f| !f.exists()));
    // Killed and recovered: recovery of the empty active segment creates
    // nothing either.
    std::mem::forget(log);
    let mut log = open(&p, cfg(), false);
    assert!(indexes(&p).iter().all(|f| !f.exists()));
    // Flushed and closed while empty: still none, and a clean open is clean.
    log.flush().unwrap();
    log.close().unwrap();
    drop(log);
    assert!(indexes(&p).iter().all(|f| !f.exists()));
    assert!(!p.join(EPOCHS).exists(), "no epoch: no checkpoint");
    let mut log = open(&p, cfg(), true);
    assert!(
        log.recovery_report().is_empty(),
        "{:?}",
        log.recovery_report()
    );
    // A batch too small for an index entry, then a clean close: Kafka's three
    // files are all there and the next clean open finds nothing to recover.
    log.append(simple(1, 0, 10), 0, None).unwrap();
    log.close().unwrap();
    drop(log);
    assert!(indexes(&p).iter().all(|f| f.exists()));
    assert_eq!(
        std::fs::read_to_string(p.join(EPOCHS)).unwrap(),
        "0\n1\n0 0\n"
    );
    let log = open(&p, cfg(), true);
    assert!(
        log.recovery_report().is_empty(),
        "{:?}",
        log.recovery_report()
    );
    assert_eq!(log.log_end_offset(), 1);
}
