//! The sparse offset index of one segment (`.index`): 8-byte big-endian
//! entries of (offset relative to the segment base, file position), kept in
//! memory for lookups and written through to the file entry by entry.

use std::path::Path;

use crate::error::{LogError, Result};
use crate::index_file::{IndexFile, IndexLoad, classify};

/// Size of one offset index entry.
pub const ENTRY_SIZE: usize = 8;

fn decode(e: &[u8]) -> (u32, u32) {
    (
        u32::from_be_bytes([e[0], e[1], e[2], e[3]]),
        u32::from_be_bytes([e[4], e[5], e[6], e[7]]),
    )
}

/// Offset index of a segment.
#[derive(Debug)]
pub struct OffsetIndex {
    file: IndexFile,
    base_offset: i64,
    entries: Vec<(u32, u32)>,
    max_entries: usize,
}

impl OffsetIndex {
    /// An empty index whose file does not exist yet (see [`IndexFile::absent`]).
    pub fn absent(path: &Path, base_offset: i64, max_index_bytes: usize) -> OffsetIndex {
        OffsetIndex {
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
    ) -> Result<(OffsetIndex, IndexLoad)> {
        let (file, content) = IndexFile::open(path, ENTRY_SIZE)?;
        let max_entries = (max_index_bytes / ENTRY_SIZE).max(1);
        let Some(content) = content else {
            let idx = OffsetIndex {
                file,
                base_offset,
                entries: Vec::new(),
                max_entries,
            };
            return Ok((idx, IndexLoad::Missing));
        };
        let (raw, load) = classify(&content, ENTRY_SIZE, |prev, e| {
            let (off, pos) = decode(e);
            match prev {
                None => pos > 0 || off > 0,
                Some(p) => {
                    let (poff, ppos) = decode(p);
                    off > poff && pos > ppos
                }
            }
        });
        let entries: Vec<(u32, u32)> = raw.into_iter().map(decode).collect();
        let mut idx = OffsetIndex {
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

    /// Last entry as (absolute offset, position).
    pub fn last_entry(&self) -> Option<(i64, u32)> {
        self.entries
            .last()
            .map(|&(o, p)| (self.base_offset + i64::from(o), p))
    }

    /// Adds an entry for `offset` at file `position`. Entries that would not
    /// advance both offset and position are skipped (as Kafka does).
    pub fn append(&mut self, offset: i64, position: u32) -> Result<()> {
        if self.is_full() {
            return Ok(());
        }
        let rel = offset - self.base_offset;
        let rel = u32::try_from(rel).map_err(|_| {
            LogError::storage(format!(
                "offset {offset} not representable relative to {}",
                self.base_offset
            ))
        })?;
        if let Some(&(lo, lp)) = self.entries.last()
            && (rel <= lo || position <= lp)
        {
            return Ok(());
        }
        if position == 0 {
            return Ok(());
        }
        let mut buf = [0u8; ENTRY_SIZE];
        buf[..4].copy_from_slice(&rel.to_be_bytes());
        buf[4..].copy_from_slice(&position.to_be_bytes());
        self.file.write_entry(self.entries.len(), &buf)?;
        self.entries.push((rel, position));
        Ok(())
    }

    /// Largest entry with offset <= `target`, as (absolute offset, position);
    /// (base_offset, 0) if there is none.
    pub fn lookup(&self, target: i64) -> (i64, u32) {
        let rel = target - self.base_offset;
        if rel < 0 {
            return (self.base_offset, 0);
        }
        let n = self.entries.partition_point(|&(o, _)| i64::from(o) <= rel);
        if n == 0 {
            (self.base_offset, 0)
        } else {
            let (o, p) = self.entries[n - 1];
            (self.base_offset + i64::from(o), p)
        }
    }

    /// Largest indexed batch position <= `position` (0 if none): a batch
    /// boundary from which a scan for the last whole batch below `position`
    /// reads only the headers of the last index interval.
    pub fn floor_position(&self, position: u32) -> u32 {
        let n = self.entries.partition_point(|&(_, p)| p <= position);
        if n == 0 { 0 } else { self.entries[n - 1].1 }
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

    /// Drops entries whose position is >= `position` (after a log truncation).
    pub fn truncate_to_position(&mut self, position: u32) -> Result<()> {
        let keep = self.entries.partition_point(|&(_, p)| p < position);
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
