//! A segment's aborted-transaction index (`<base>.txnindex`, Kafka's
//! format): one 34-byte entry per transaction whose ABORT marker is in the
//! segment — version (i16, 0), producer id (i64), first offset (i64), last
//! offset (i64, the marker's), last stable offset (i64) — all big-endian.
//!
//! A read_committed fetch lists the aborted transactions overlapping the
//! range it returns, and clients drop those records themselves. Entries are
//! few (aborts only), so they are held in memory and the file is written
//! through: created on the first entry, appended to, rewritten on
//! truncation, fsynced with the segment.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{LogError, Result};

/// Bytes per entry on disk.
pub const ENTRY_SIZE: usize = 34;
const VERSION: i16 = 0;

/// One aborted transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// Producer that wrote it.
    pub producer_id: i64,
    /// Offset of its first batch.
    pub first_offset: i64,
    /// Offset of its ABORT marker.
    pub last_offset: i64,
    /// The partition's last stable offset once the abort was written.
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&self.producer_id.to_be_bytes());
        out.extend_from_slice(&self.first_offset.to_be_bytes());
        out.extend_from_slice(&self.last_offset.to_be_bytes());
        out.extend_from_slice(&self.last_stable_offset.to_be_bytes());
    }

    fn decode(b: &[u8]) -> Option<AbortedTxn> {
        let i64_at = |at: usize| -> Option<i64> {
            Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
        };
        let version = i16::from_be_bytes(b.get(0..2)?.try_into().ok()?);
        if version != VERSION {
            return None;
        }
        Some(AbortedTxn {
            producer_id: i64_at(2)?,
            first_offset: i64_at(10)?,
            last_offset: i64_at(18)?,
            last_stable_offset: i64_at(26)?,
        })
    }
}

/// The entries of one segment and their file.
#[derive(Debug)]
pub struct TransactionIndex {
    path: PathBuf,
    entries: Vec<AbortedTxn>,
    unsynced: AtomicBool,
}

impl TransactionIndex {
    /// Loads `path` if it exists. A torn last entry (a crash mid-write) or
    /// an unreadable one ends the list; the caller rebuilds what recovery
    /// finds missing. Returns the index and whether anything was dropped.
    pub fn open(path: &Path) -> Result<(TransactionIndex, bool)> {
        let data = match fs::read(path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(LogError::io(format!("reading {}", path.display()), e)),
        };
        let mut entries = Vec::with_capacity(data.len() / ENTRY_SIZE);
        let mut damaged = data.len() % ENTRY_SIZE != 0;
        for chunk in data.chunks_exact(ENTRY_SIZE) {
            match AbortedTxn::decode(chunk) {
                Some(e) => entries.push(e),
                None => {
                    damaged = true;
                    break;
                }
            }
        }
        let mut index = TransactionIndex {
            path: path.to_path_buf(),
            entries,
            unsynced: AtomicBool::new(false),
        };
        if damaged {
            index.rewrite()?;
        }
        Ok((index, damaged))
    }

    /// An empty index whose file does not exist (a segment in a directory
    /// just created): nothing to remove.
    pub fn absent(path: &Path) -> TransactionIndex {
        TransactionIndex {
            path: path.to_path_buf(),
            entries: Vec::new(),
            unsynced: AtomicBool::new(false),
        }
    }

    /// An empty index at `path`, any old file there removed.
    pub fn create(path: &Path) -> Result<TransactionIndex> {
        remove_if_present(path)?;
        Ok(TransactionIndex {
            path: path.to_path_buf(),
            entries: Vec::new(),
            unsynced: AtomicBool::new(false),
        })
    }

    /// Path of the file (which exists only once there is an entry).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries, in marker order.
    pub fn entries(&self) -> &[AbortedTxn] {
        &self.entries
    }

    /// True if the index holds the abort whose marker is at `last_offset`.
    pub fn contains(&self, last_offset: i64) -> bool {
        self.entries.iter().any(|e| e.last_offset == last_offset)
    }

    /// Appends an entry (written to the file at once, fsynced on flush).
    pub fn append(&mut self, entry: AbortedTxn) -> Result<()> {
        let mut buf = Vec::with_capacity(ENTRY_SIZE);
        entry.encode(&mut buf);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| LogError::io(format!("opening {}", self.path.display()), e))?;
        f.write_all(&buf)
            .map_err(|e| LogError::io(format!("appending to {}", self.path.display()), e))?;
        self.entries.push(entry);
        self.unsynced.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Drops the entries whose marker is at or after `offset`.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let before = self.entries.len();
        self.entries.retain(|e| e.last_offset < offset);
        if self.entries.len() != before {
            self.rewrite()?;
        }
        Ok(())
    }

    /// Replaces the entries (a cleaned segment takes its sources' entries).
    pub fn replace(&mut self, entries: Vec<AbortedTxn>) -> Result<()> {
        self.entries = entries;
        self.rewrite()
    }

    /// Aborted transactions overlapping `[from, upper)`: marker at or after
    /// `from`, first offset before `upper`.
    pub fn collect(&self, from: i64, upper: i64, out: &mut Vec<AbortedTxn>) {
        out.extend(
            self.entries
                .iter()
                .filter(|e| e.last_offset >= from && e.first_offset < upper),
        );
    }

    /// fsyncs the file if an entry was written since the last flush.
    pub fn flush(&self) -> Result<()> {
        if !self.unsynced.load(Ordering::Relaxed) {
            return Ok(());
        }
        match File::open(&self.path) {
            Ok(f) => f
                .sync_all()
                .map_err(|e| LogError::io(format!("syncing {}", self.path.display()), e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(LogError::io(format!("opening {}", self.path.display()), e)),
        }
        self.unsynced.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Moves the file to `to` (a segment changing its suffix).
    pub fn rename(&mut self, to: &Path) -> Result<()> {
        match fs::rename(&self.path, to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(LogError::io(
                    format!("renaming {} to {}", self.path.display(), to.display()),
                    e,
                ));
            }
        }
        self.path = to.to_path_buf();
        Ok(())
    }

    /// Removes the file.
    pub fn delete(&self) -> Result<()> {
        remove_if_present(&self.path)
    }

    fn rewrite(&mut self) -> Result<()> {
        if self.entries.is_empty() {
            self.unsynced.store(false, Ordering::Relaxed);
            return remove_if_present(&self.path);
        }
        let mut buf = Vec::with_capacity(self.entries.len() * ENTRY_SIZE);
        for e in &self.entries {
            e.encode(&mut buf);
        }
        let tmp = self.path.with_extension("txnindex.tmp");
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&buf)?;
            f.sync_all()?;
            fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| LogError::io(format!("rewriting {}", self.path.display()), e))?;
        self.unsynced.store(false, Ordering::Relaxed);
        Ok(())
    }
}

fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LogError::io(format!("removing {}", path.display()), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pid: i64, first: i64, last: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: last,
            last_stable_offset: last + 1,
        }
    }

    #[test]
    fn entries_are_kafkas_34_bytes_and_survive_a_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("00000000000000000000.txnindex");
        let (mut idx, damaged) = TransactionIndex::open(&path).expect("open");
        assert!(!damaged && idx.entries().is_empty() && !path.exists());
        idx.append(entry(7, 3, 9)).expect("append");
        idx.append(entry(8, 5, 12)).expect("append");
        idx.flush().expect("flush");
        let raw = fs::read(&path).expect("read");
        assert_eq!(raw.len(), 2 * ENTRY_SIZE);
        assert_eq!(&raw[0..2], &[0, 0]);
        assert_eq!(i64::from_be_bytes(raw[2..10].try_into().expect("8")), 7);
        let (again, damaged) = TransactionIndex::open(&path).expect("reopen");
        assert!(!damaged);
        assert_eq!(again.entries(), &[entry(7, 3, 9), entry(8, 5, 12)]);
    }

    #[test]
    fn a_torn_entry_is_dropped_and_truncation_rewrites() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("00000000000000000000.txnindex");
        let (mut idx, _) = TransactionIndex::open(&path).expect("open");
        idx.append(entry(1, 0, 4)).expect("append");
        idx.append(entry(2, 2, 8)).expect("append");
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(&[0, 0, 1]).expect("torn");
        let (mut idx, damaged) = TransactionIndex::open(&path).expect("reopen");
        assert!(damaged);
        assert_eq!(idx.entries().len(), 2);
        assert_eq!(
            fs::metadata(&path).expect("stat").len(),
            2 * ENTRY_SIZE as u64
        );
        idx.truncate_to(8).expect("truncate");
        assert_eq!(idx.entries(), &[entry(1, 0, 4)]);
        idx.truncate_to(0).expect("truncate");
        assert!(!path.exists());
    }

    #[test]
    fn collect_takes_the_aborts_overlapping_a_range() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut idx, _) = TransactionIndex::open(&dir.path().join("0.txnindex")).expect("open");
        idx.append(entry(1, 0, 4)).expect("append");
        idx.append(entry(2, 6, 10)).expect("append");
        idx.append(entry(3, 20, 25)).expect("append");
        let mut out = Vec::new();
        idx.collect(5, 20, &mut out);
        assert_eq!(out, vec![entry(2, 6, 10)]);
        out.clear();
        idx.collect(4, 21, &mut out);
        assert_eq!(out.len(), 3);
    }
}
