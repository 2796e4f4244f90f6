//! A full disk under an append: an index write failing with ENOSPC (the
//! index file is a symlink to /dev/full) undoes the append whole, so the log
//! end offset does not move, the refused bytes are not counted, and what was
//! appended before reads back with valid CRCs.
mod common;

use common::*;
use std::path::Path;

#[test]
fn index_write_failing_with_enospc_undoes_the_append() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full on this system");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // An index entry after every batch: the second append writes one.
    let mut log = open(dir.path(), small_cfg(1 << 20, 1), true);
    std::os::unix::fs::symlink("/dev/full", dir.path().join("00000000000000000000.index")).unwrap();
    let first = simple(3, 1000, 100);
    log.append(first.clone(), 0, None).unwrap();
    assert_eq!(log.log_end_offset(), 3);
    let log_file = dir.path().join("00000000000000000000.log");
    let size = std::fs::metadata(&log_file).unwrap().len();

    let err = log.append(simple(2, 2000, 100), 0, None).unwrap_err();
    assert_eq!(err.code, 56, "{err}");
    assert!(err.message.contains("No space left"), "{err}");
    assert_eq!(
        log.log_end_offset(),
        3,
        "a refused append moved the log end"
    );
    assert_eq!(std::fs::metadata(&log_file).unwrap().len(), size);
    let data = log.read(0, 1 << 20, true).unwrap();
    assert_eq!(batches_in(&data), vec![(0, 2)]);
    assert_eq!(
        crc32c::crc32c(&data[21..first.len()]),
        u32::from_be_bytes(data[17..21].try_into().unwrap())
    );
    // Reads past the end still answer as the end, not a refused batch.
    assert!(log.read(3, 1 << 20, true).unwrap().is_empty());
}
