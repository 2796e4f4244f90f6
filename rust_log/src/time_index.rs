//! The sparse time index of one segment (`.timeindex`): 12-byte big-endian
//! entries of (max timestamp so far, relative offset of the batch where it
//! was reached), appended only when the timestamp grows.

use std::path::Path;

use crate::error::{LogError, Result};
use crate::index_file::{IndexFile, IndexLoad, classify};

/// Size of one time index entry.
pub const ENTRY_SIZE: usize = 12;

fn decode(e: &[u8]) -> (i64, u32) {
    let mut ts = [0u8; 8];
    ts.copy_from_slice(&e[..8]);
    (
        i64::from_be_bytes(ts),
        u32::from_be_bytes([e[8], e[9], e[10], e[11]]),
    )
}

/// Time index of a segment.
#[derive(Debug)]
pub struct TimeIndex {
    file: IndexFile,
    base_offset: i64,
    entries: Vec<(i64, u32)>,
    max_entries: usize,
}

impl TimeIndex {
    /// An empty index whose file does not exist yet (see [`IndexFile::absent`]).
    pub fn absent(path: &Path, base_offset: i64, max_index_bytes: usize) -> TimeIndex {
        TimeIndex {
            file: IndexFile::absent(path, ENTRY_SIZE),
            base_offset,
            entries: Vec::new(),
            max_entries: (max_index_bytes / ENTRY_SIZE).max(1),
        }
    }

    /// Opens or creates the index; reports how the stored file looked.
    pub fn open(
        path: &Path,
        base_offset: i64,
        max_index_bytes: usize,
    ) -> Result<(TimeIndex, IndexLoad)> {
        let (file, content) = IndexFile::open(path, ENTRY_SIZE)?;
        let max_entries = (max_index_bytes / ENTRY_SIZE).max(1);
        let Some(content) = content else {
            return Ok((
                TimeIndex {
                    file,
                    base_offset,
                    entries: Vec::new(),
                    max_entries,
                },
                IndexLoad::Missing,
            ));
        };
        let (raw, load) = classify(&content, ENTRY_SIZE, |prev, e| match prev {
            None => true,
            Some(p) => {
                let (pts, poff) = decode(p);
                let (ts, off) = decode(e);
                ts > pts && off >= poff
            }
        });
        let entries: Vec<(i64, u32)> = raw.into_iter().map(decode).collect();
        let mut idx = TimeIndex {
            file,
            base_offset,
            entries,
            max_entries,
        };
        match load {
            IndexLoad::Preallocated => idx.file.set_entries(idx.entries.len())?,
            IndexLoad::Corrupt(_) => idx.entries.clear(),
            _ => {}
        }
        Ok((idx, load))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// True if there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// True when no further entry fits in `segment_index_bytes`.
    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.max_entries
    }

    /// Last entry as (timestamp, absolute offset).
    pub fn last_entry(&self) -> Option<(i64, i64)> {
        self.entries
            .last()
            .map(|&(t, o)| (t, self.base_offset + i64::from(o)))
    }

    /// Appends (timestamp, offset) if the timestamp is larger than the last
    /// entry's. `skip_full_check` lets the final entry of a segment through.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<()> {
        if !skip_full_check && self.is_full() {
            return Ok(());
        }
        let rel = u32::try_from(offset - self.base_offset).map_err(|_| {
            LogError::storage(format!(
                "offset {offset} not representable relative to {}",
                self.base_offset
            ))
        })?;
        if let Some(&(lt, lo)) = self.entries.last()
            && (timestamp <= lt || rel < lo)
        {
            return Ok(());
        }
        if timestamp == 0 && rel == 0 {
            // Indistinguishable from preallocated space; nothing is lost by
            // skipping it (lookups fall back to the segment start).
            return Ok(());
        }
        let mut buf = [0u8; ENTRY_SIZE];
        buf[..8].copy_from_slice(&timestamp.to_be_bytes());
        buf[8..].copy_from_slice(&rel.to_be_bytes());
        self.file.write_entry(self.entries.len(), &buf)?;
        self.entries.push((timestamp, rel));
        Ok(())
    }

    /// Largest entry with timestamp <= `target` as (timestamp, absolute
    /// offset); (-1, base_offset) if there is none.
    pub fn lookup(&self, target: i64) -> (i64, i64) {
        let n = self.entries.partition_point(|&(t, _)| t <= target);
        if n == 0 {
            (-1, self.base_offset)
        } else {
            let (t, o) = self.entries[n - 1];
            (t, self.base_offset + i64::from(o))
        }
    }

    /// Drops all entries (before a rebuild).
    pub fn reset(&mut self) -> Result<()> {
        self.entries.clear();
        self.clear()
    }

    /// Empties the file, if it exists (see [`IndexFile::clear`]); the
    /// entries must already be empty.
    pub fn clear(&self) -> Result<()> {
        debug_assert!(self.entries.is_empty());
        self.file.clear()
    }

    /// Drops entries with offset >= `offset` (after a log truncation).
    pub fn truncate_to_offset(&mut self, offset: i64) -> Result<()> {
        let keep = self
            .entries
            .partition_point(|&(_, o)| self.base_offset + i64::from(o) < offset);
        self.entries.truncate(keep);
        self.file.set_entries(keep)
    }

    /// fsync.
    pub fn flush(&self) -> Result<()> {
        self.file.flush()
    }

    /// Trims the file to its real entries.
    pub fn trim(&self) -> Result<()> {
        self.file.set_entries(self.entries.len())
    }

    /// Path of the index file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Renames the index file.
    pub fn rename(&mut self, to: &Path) -> Result<()> {
        self.file.rename(to)
    }
}
