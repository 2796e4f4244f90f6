//! Leader epoch cache: the start offset of each leader epoch seen in the
//! log, persisted as Kafka's `leader-epoch-checkpoint` text file and used to
//! answer OffsetForLeaderEpoch (`end_offset_for`).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{LogError, Result};

/// Name of the checkpoint file in the partition directory.
pub const CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";

/// Ordered (epoch, start offset) entries.
#[derive(Debug, Clone)]
pub struct LeaderEpochCache {
    path: PathBuf,
    entries: Vec<(i32, i64)>,
}

/// What [`LeaderEpochCache::open`] found on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointLoad {
    /// A valid checkpoint was read.
    Loaded,
    /// No checkpoint file (a new log, or one never checkpointed).
    Missing,
    /// A file that could not be read or parsed (the caller rebuilds the
    /// cache from batch headers and must replace the file).
    Invalid,
}

impl LeaderEpochCache {
    /// An empty cache for a directory just created (no checkpoint to read).
    pub fn absent(dir: &Path) -> LeaderEpochCache {
        LeaderEpochCache {
            path: dir.join(CHECKPOINT_FILE),
            entries: Vec::new(),
        }
    }

    /// Loads the checkpoint; returns the cache and what was found (unless
    /// `Loaded`, the caller rebuilds the cache from batch headers).
    pub fn open(dir: &Path) -> (LeaderEpochCache, CheckpointLoad) {
        let path = dir.join(CHECKPOINT_FILE);
        let (entries, load) = match fs::read_to_string(&path) {
            Ok(text) => match parse_checkpoint(&text) {
                Some(entries) => (entries, CheckpointLoad::Loaded),
                None => (Vec::new(), CheckpointLoad::Invalid),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (Vec::new(), CheckpointLoad::Missing)
            }
            Err(_) => (Vec::new(), CheckpointLoad::Invalid),
        };
        (LeaderEpochCache { path, entries }, load)
    }

    /// Entries, oldest first.
    pub fn entries(&self) -> &[(i32, i64)] {
        &self.entries
    }

    /// Latest epoch, if any.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.0)
    }

    /// Records that `epoch` starts at `start_offset`. Conflicting later
    /// entries (epoch >= `epoch` or start >= `start_offset`) are replaced,
    /// like Kafka's `assign`. Returns true if the cache changed.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> bool {
        if epoch < 0 {
            return false;
        }
        if let Some(&(e, s)) = self.entries.last()
            && e == epoch
            && start_offset >= s
        {
            return false;
        }
        self.entries.retain(|&(e, s)| e < epoch && s < start_offset);
        self.entries.push((epoch, start_offset));
        true
    }

    /// Drops entries starting at or after `end_offset`; true if any were.
    pub fn truncate_from_end(&mut self, end_offset: i64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|&(_, s)| s < end_offset);
        before != self.entries.len()
    }

    /// Forgets epochs that end before `start_offset` (the new log start);
    /// true if the cache changed.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> bool {
        // Entries wholly below the new start go; the last of them is kept,
        // moved up to the start offset (as Kafka's truncateFromStart).
        let below = self
            .entries
            .iter()
            .take_while(|&&(_, s)| s <= start_offset)
            .count();
        if below == 0 {
            return false;
        }
        let (epoch, old_start) = self.entries[below - 1];
        if below == 1 && old_start == start_offset {
            return false;
        }
        self.entries.drain(..below - 1);
        self.entries[0] = (epoch, start_offset);
        true
    }

    /// Drops everything (before a rebuild).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// OffsetForLeaderEpoch: (largest epoch <= requested, start offset of
    /// the next higher epoch or `log_end_offset`), following Kafka's
    /// `LeaderEpochFileCache.endOffsetFor`:
    /// - requested == latest epoch: (requested, log_end_offset);
    /// - requested above every known epoch, or the cache is empty: (-1, -1);
    /// - requested below the first known epoch: (requested, start offset of
    ///   the first epoch);
    /// - otherwise (floor epoch, start offset of the next higher epoch).
    pub fn end_offset_for(&self, requested: i32, log_end_offset: i64) -> (i32, i64) {
        if requested < 0 {
            return (-1, -1);
        }
        if self.latest_epoch() == Some(requested) {
            return (requested, log_end_offset);
        }
        let Some(&(_, higher_start)) = self.entries.iter().find(|&&(e, _)| e > requested) else {
            return (-1, -1);
        };
        match self.entries.iter().rev().find(|&&(e, _)| e <= requested) {
            None => (requested, higher_start),
            Some(&(floor, _)) => (floor, higher_start),
        }
    }

    /// Writes the checkpoint atomically (temp file, fsync, rename).
    pub fn persist(&self) -> Result<()> {
        self.write(true)
    }

    /// Replaces the checkpoint (temp file, rename) without fsyncing it: the
    /// new content survives a killed process (page cache) at once and a
    /// power cut once [`Self::sync`] has run. Losing it in a power cut costs
    /// nothing but a rebuild: on open, entries are re-derived from the batch
    /// headers after the producer snapshot (and a torn or empty file fails to
    /// parse, which rebuilds from the log start), the way Kafka re-derives
    /// truncations it no longer fsyncs (KAFKA-15046). This keeps an fsync off
    /// the produce path of every new partition's first append.
    pub fn write_unsynced(&self) -> Result<()> {
        self.write(false)
    }

    /// fsyncs the checkpoint written by [`Self::write_unsynced`].
    pub fn sync(&self) -> Result<()> {
        File::open(&self.path)
            .and_then(|f| f.sync_all())
            .map_err(|e| LogError::io(format!("syncing {}", self.path.display()), e))
    }

    fn write(&self, sync: bool) -> Result<()> {
        let mut text = format!("0\n{}\n", self.entries.len());
        for (e, s) in &self.entries {
            text.push_str(&format!("{e} {s}\n"));
        }
        let tmp = self.path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            if sync {
                f.sync_all()?;
            }
            fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| LogError::io(format!("writing {}", self.path.display()), e))
    }
}

fn parse_checkpoint(text: &str) -> Option<Vec<(i32, i64)>> {
    let mut lines = text.lines();
    if lines.next()?.trim() != "0" {
        return None;
    }
    let count: usize = lines.next()?.trim().parse().ok()?;
    let mut entries = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let mut parts = lines.next()?.split_whitespace();
        let epoch: i32 = parts.next()?.parse().ok()?;
        let start: i64 = parts.next()?.parse().ok()?;
        if let Some(&(pe, ps)) = entries.last()
            && (epoch <= pe || start < ps)
        {
            return None;
        }
        entries.push((epoch, start));
    }
    Some(entries)
}
