//! Creating a new topic's logs: the batch creation, and the leader epoch of a log that is still
//! empty.
mod common;

use _rust_log::PartitionLog;
use common::*;

const EPOCHS: &str = "leader-epoch-checkpoint";

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn create_many_makes_each_directory_with_its_topic_id_and_an_empty_log() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = (0..3).map(|p| root.path().join(format!("t-{p}"))).collect();
    let mut logs =
        PartitionLog::create_many(&dirs, cfg(), Some(b"version: 0\ntopic_id: x\n")).unwrap();
    assert_eq!(logs.len(), 3);
    for (dir, log) in dirs.iter().zip(&mut logs) {
        assert_eq!(
            names(dir),
            ["00000000000000000000.log", "partition.metadata"]
        );
        assert_eq!(
            std::fs::read(dir.join("partition.metadata")).unwrap(),
            b"version: 0\ntopic_id: x\n"
        );
        assert_eq!((log.log_start_offset(), log.log_end_offset()), (0, 0));
        log.append(simple(2, 1000, 10), 0, None).unwrap();
        assert_eq!(records_of(&log.read(0, 1 << 20, true).unwrap()).len(), 2);
    }
    drop(logs);
    // What they wrote is found on the next open, as any log's is.
    let reopened = open(&dirs[1], cfg(), true);
    assert_eq!(reopened.log_end_offset(), 2);
}

#[test]
fn create_many_opens_a_directory_that_exists_and_keeps_its_records() {
    let root = tempfile::tempdir().unwrap();
    let old = root.path().join("t-0");
    {
        let mut log = open(&old, cfg(), true);
        log.append(simple(3, 1000, 10), 0, None).unwrap();
    }
    let dirs = vec![old.clone(), root.path().join("t-1")];
    let logs = PartitionLog::create_many(&dirs, cfg(), None).unwrap();
    assert_eq!(logs[0].log_end_offset(), 3);
    assert_eq!(logs[1].log_end_offset(), 0);
    assert!(!dirs[1].join("partition.metadata").exists());
}

#[test]
fn create_many_fails_on_a_bad_parent_and_reports_it() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("file"), b"").unwrap();
    let dirs = vec![
        root.path().join("t-0"),
        root.path().join("file").join("t-1"),
    ];
    let err = PartitionLog::create_many(&dirs, cfg(), None).unwrap_err();
    assert!(err.message.contains("file/t-1"), "{}", err.message);
}

#[test]
fn an_empty_logs_epoch_is_written_with_its_first_append() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t-0");
    let mut logs = PartitionLog::create_many(std::slice::from_ref(&dir), cfg(), None).unwrap();
    let log = &mut logs[0];
    assert!(log.assign_leader_epoch(3).unwrap());
    assert_eq!(log.leader_epochs(), &[(3, 0)]);
    // Assigning it cost no file: a topic of thousands of partitions wrote one each.
    assert!(!dir.join(EPOCHS).exists());
    log.append(simple(2, 1000, 10), 3, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join(EPOCHS)).unwrap(),
        "0\n1\n3 0\n"
    );
}

#[test]
fn an_empty_logs_epoch_is_not_written_by_a_flush_or_close() {
    for close in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        let mut log = open(&dir, cfg(), true);
        log.assign_leader_epoch(5).unwrap();
        if close {
            log.close().unwrap();
        } else {
            log.flush().unwrap();
        }
        // An entry at the log end is dropped on open (the epoch is assigned again when this
        // replica next leads), so writing it would cost a file and an fsync for nothing.
        assert!(!dir.join(EPOCHS).exists());
        drop(log);
        let mut reopened = open(&dir, cfg(), true);
        assert_eq!(reopened.leader_epochs(), &[]);
        reopened.assign_leader_epoch(6).unwrap();
        reopened.append(simple(1, 1000, 10), 6, None).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(EPOCHS)).unwrap(),
            "0\n1\n6 0\n"
        );
    }
}

#[test]
fn an_emptied_logs_new_epoch_leaves_the_old_checkpoint_as_it_was() {
    // Records, then retention removes them all: the log is empty again at offset 2. A new epoch
    // assigned there is not written at close; the checkpoint keeps the entries from before.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t-0");
    let mut log = open(&dir, cfg(), true);
    log.assign_leader_epoch(1).unwrap();
    log.append(simple(2, 1000, 10), 1, None).unwrap();
    log.delete_records(2).unwrap();
    log.flush().unwrap();
    let before = std::fs::read_to_string(dir.join(EPOCHS)).unwrap();
    assert!(log.assign_leader_epoch(4).unwrap());
    log.close().unwrap();
    drop(log);
    assert_eq!(std::fs::read_to_string(dir.join(EPOCHS)).unwrap(), before);
    let reopened = open(&dir, cfg(), true);
    assert!(reopened.leader_epochs().iter().all(|&(epoch, _)| epoch < 4));
}

#[test]
fn an_epoch_assigned_to_a_log_with_records_is_written_at_once() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t-0");
    let mut log = open(&dir, cfg(), true);
    log.append(simple(2, 1000, 10), 0, None).unwrap();
    assert!(log.assign_leader_epoch(2).unwrap());
    // Written (not yet fsynced) before the next append: a killed process keeps it.
    assert_eq!(
        std::fs::read_to_string(dir.join(EPOCHS)).unwrap(),
        "0\n2\n0 0\n2 2\n"
    );
}
