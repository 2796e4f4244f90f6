//! One log segment: the `.log` file of verbatim batches plus its `.index`
//! and `.timeindex`, with append, positional reads, batch location by
//! offset, index maintenance and the cheap open-time sanity check.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::batch_scanner::BatchScanner;
use crate::error::{LogError, Result};
use crate::index_file::IndexLoad;
use crate::offset_index::OffsetIndex;
use crate::record_batch::BatchHeader;
use crate::time_index::TimeIndex;
use crate::validator::ValidatedBatch;

/// Sizing knobs a segment needs.
#[derive(Debug, Clone, Copy)]
pub struct SegmentConfig {
    /// Roll when the log file would exceed this.
    pub segment_bytes: u64,
    /// Bytes of log between offset index entries.
    pub index_interval_bytes: u64,
    /// Maximum size of each index file.
    pub segment_index_bytes: usize,
}

/// File name stem for a base offset (`%020d`).
pub fn file_stem(base_offset: i64) -> String {
    format!("{base_offset:020}")
}

/// Path of a segment file with the given extension (`log`, `index`, ...).
pub fn segment_path(dir: &Path, base_offset: i64, ext: &str) -> PathBuf {
    dir.join(format!("{}.{ext}", file_stem(base_offset)))
}

/// A segment and its in-memory bookkeeping.
#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    file: Arc<File>,
    size: u64,
    pub(crate) offset_index: OffsetIndex,
    pub(crate) time_index: TimeIndex,
    bytes_since_last_index_entry: u64,
    index_interval_bytes: u64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    next_offset: i64,
}

impl Segment {
    fn open_files(
        dir: &Path,
        base_offset: i64,
        cfg: &SegmentConfig,
        truncate: bool,
    ) -> Result<(Segment, IndexLoad, IndexLoad)> {
        let log_path = segment_path(dir, base_offset, "log");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(truncate)
            .open(&log_path)
            .map_err(|e| LogError::io(format!("opening {}", log_path.display()), e))?;
        let size = file
            .metadata()
            .map_err(|e| LogError::io(format!("stat {}", log_path.display()), e))?
            .len();
        if truncate {
            for ext in ["index", "timeindex"] {
                let p = segment_path(dir, base_offset, ext);
                if p.exists() {
                    fs::remove_file(&p)
                        .map_err(|e| LogError::io(format!("removing {}", p.display()), e))?;
                }
            }
        }
        let (offset_index, oload) = OffsetIndex::open(
            &segment_path(dir, base_offset, "index"),
            base_offset,
            cfg.segment_index_bytes,
        )?;
        let (time_index, tload) = TimeIndex::open(
            &segment_path(dir, base_offset, "timeindex"),
            base_offset,
            cfg.segment_index_bytes,
        )?;
        let seg = Segment {
            base_offset,
            log_path,
            file: Arc::new(file),
            size,
            offset_index,
            time_index,
            bytes_since_last_index_entry: 0,
            index_interval_bytes: cfg.index_interval_bytes,
            max_timestamp: -1,
            offset_of_max_timestamp: -1,
            next_offset: base_offset,
        };
        Ok((seg, oload, tload))
    }

    /// Creates a new, empty segment (replacing any leftover files).
    pub fn create(dir: &Path, base_offset: i64, cfg: &SegmentConfig) -> Result<Segment> {
        Ok(Self::open_files(dir, base_offset, cfg, true)?.0)
    }

    /// Opens an existing segment. Returns the segment and, if it looks
    /// inconsistent, the reason it must be recovered. When the check passes
    /// the segment's next offset and max timestamp are known.
    pub fn open(
        dir: &Path,
        base_offset: i64,
        cfg: &SegmentConfig,
    ) -> Result<(Segment, Option<String>)> {
        let (mut seg, oload, tload) = Self::open_files(dir, base_offset, cfg, false)?;
        let problem = seg.sanity_check(&oload, &tload);
        Ok((seg, problem))
    }

    fn sanity_check(&mut self, oload: &IndexLoad, tload: &IndexLoad) -> Option<String> {
        if self.size > 0 {
            if *oload == IndexLoad::Missing {
                return Some("offset index missing".into());
            }
            if *tload == IndexLoad::Missing {
                return Some("time index missing".into());
            }
        }
        if let IndexLoad::Corrupt(why) = oload {
            return Some(format!("offset index corrupt: {why}"));
        }
        if let IndexLoad::Corrupt(why) = tload {
            return Some(format!("time index corrupt: {why}"));
        }
        let mut start = 0u64;
        if let Some((off, pos)) = self.offset_index.last_entry() {
            if u64::from(pos) >= self.size {
                return Some(format!(
                    "offset index entry points at position {pos} beyond log size {}",
                    self.size
                ));
            }
            start = u64::from(pos);
            // The entry must name the last offset of the batch it points to.
            let mut scan = BatchScanner::new(&self.file, start, self.size);
            match scan.next_header() {
                Ok(Some((_, h))) if h.last_offset() == off => {}
                Ok(_) => {
                    return Some(format!(
                        "offset index entry for offset {off} does not match the log"
                    ));
                }
                Err(e) => return Some(e.message),
            }
        }
        if let Some((ts, off)) = self.time_index.last_entry() {
            self.max_timestamp = ts;
            self.offset_of_max_timestamp = off;
        }
        // Walk the batch headers after the last index entry to find the end.
        let mut next = self.base_offset;
        let mut scan = BatchScanner::new(&self.file, start, self.size);
        loop {
            match scan.next_header() {
                Ok(Some((_, h))) => {
                    if h.base_offset < next || h.base_offset < self.base_offset {
                        return Some(format!(
                            "batch offsets go backwards at offset {}",
                            h.base_offset
                        ));
                    }
                    next = h.next_offset();
                    if h.max_timestamp > self.max_timestamp {
                        self.max_timestamp = h.max_timestamp;
                        self.offset_of_max_timestamp = h.last_offset();
                    }
                    self.bytes_since_last_index_entry += h.total_size() as u64;
                }
                Ok(None) => break,
                Err(e) => return Some(e.message),
            }
        }
        if let Some((_, off)) = self.time_index.last_entry()
            && off >= next
            && self.size > 0
        {
            return Some(format!(
                "time index refers to offset {off} beyond the segment end {next}"
            ));
        }
        self.next_offset = next;
        None
    }

    /// First offset of the segment (from its file name).
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// Offset after the last batch (base offset when empty).
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }
    /// Bytes in the `.log` file.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// Largest batch max timestamp in the segment (-1 if none).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }
    /// Last offset of the first batch that reached [`Self::max_timestamp`].
    pub fn offset_of_max_timestamp(&self) -> i64 {
        self.offset_of_max_timestamp
    }
    /// Shared handle to the log file (for reads outside the partition lock).
    pub fn file(&self) -> &Arc<File> {
        &self.file
    }
    /// Path of the `.log` file.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Whether appending `incoming` bytes ending at `last_offset` needs a new
    /// segment first (size, full index, or relative offset overflow).
    pub fn should_roll(&self, incoming: u64, last_offset: i64, segment_bytes: u64) -> bool {
        if self.size == 0 {
            return false;
        }
        self.size + incoming > segment_bytes
            || self.offset_index.is_full()
            || self.time_index.is_full()
            || last_offset - self.base_offset > i64::from(i32::MAX)
    }

    /// Updates max timestamp and sparse indexes for a batch written at `pos`.
    pub(crate) fn index_batch(&mut self, pos: u64, h: &BatchHeader) -> Result<()> {
        if h.max_timestamp > self.max_timestamp {
            self.max_timestamp = h.max_timestamp;
            self.offset_of_max_timestamp = h.last_offset();
        }
        if self.bytes_since_last_index_entry > self.index_interval_bytes {
            let pos32 = u32::try_from(pos)
                .map_err(|_| LogError::storage("segment position beyond 4 GiB"))?;
            self.offset_index.append(h.last_offset(), pos32)?;
            self.time_index.maybe_append(
                self.max_timestamp,
                self.offset_of_max_timestamp,
                false,
            )?;
            self.bytes_since_last_index_entry = 0;
        }
        self.bytes_since_last_index_entry += h.total_size() as u64;
        self.next_offset = h.next_offset();
        Ok(())
    }

    /// Writes validated batches at the end of the file with a positional
    /// write (no user-space buffering), then updates the indexes. On a write
    /// failure the file is cut back to its previous size.
    pub fn append(&mut self, buf: &[u8], batches: &[ValidatedBatch]) -> Result<()> {
        let start = self.size;
        if let Err(e) = self.file.write_all_at(buf, start) {
            let _ = self.file.set_len(start);
            return Err(LogError::io(
                format!("appending to {}", self.log_path.display()),
                e,
            ));
        }
        self.size = start + buf.len() as u64;
        for b in batches {
            self.index_batch(start + b.start as u64, &b.header)?;
        }
        Ok(())
    }

    /// Reads `len` bytes at `pos`.
    pub fn read_at(&self, pos: u64, len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        self.file
            .read_exact_at(&mut out, pos)
            .map_err(|e| LogError::io(format!("reading {}", self.log_path.display()), e))?;
        Ok(out)
    }

    /// Scanner over the segment's batches from `pos`.
    pub fn scanner(&self, pos: u64) -> BatchScanner<'_> {
        BatchScanner::new(&self.file, pos, self.size)
    }

    /// Finds the batch containing `offset` (or the first batch after it);
    /// `None` if the segment has nothing at or after `offset`.
    pub fn locate(&self, offset: i64) -> Result<Option<(u64, BatchHeader)>> {
        let (_, pos) = self.offset_index.lookup(offset);
        let mut scan = self.scanner(u64::from(pos));
        while let Some((at, h)) = scan.next_header()? {
            if h.last_offset() >= offset {
                return Ok(Some((at, h)));
            }
        }
        Ok(None)
    }

    /// Cuts the log back to `size` bytes, dropping index entries past it.
    /// Bookkeeping (next offset, max timestamp) must be rebuilt by the caller.
    pub(crate) fn truncate_log(&mut self, size: u64) -> Result<()> {
        self.file
            .set_len(size)
            .map_err(|e| LogError::io(format!("truncating {}", self.log_path.display()), e))?;
        self.size = size;
        Ok(())
    }

    /// Clears indexes and bookkeeping before a full rebuild.
    pub(crate) fn reset_indexes(&mut self) -> Result<()> {
        self.offset_index.reset()?;
        self.time_index.reset()?;
        self.bytes_since_last_index_entry = 0;
        self.max_timestamp = -1;
        self.offset_of_max_timestamp = -1;
        self.next_offset = self.base_offset;
        Ok(())
    }

    /// Called when the segment stops being the active one: records the final
    /// time index entry and trims the index files.
    pub fn seal(&mut self) -> Result<()> {
        if self.offset_of_max_timestamp >= 0 {
            self.time_index
                .maybe_append(self.max_timestamp, self.offset_of_max_timestamp, true)?;
        }
        self.offset_index.trim()?;
        self.time_index.trim()
    }

    /// fsyncs log and indexes.
    pub fn flush(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| LogError::io(format!("syncing {}", self.log_path.display()), e))?;
        self.offset_index.flush()?;
        self.time_index.flush()
    }

    /// Deletes the segment's files.
    pub fn delete_files(self) -> Result<()> {
        for p in [
            self.log_path.clone(),
            self.offset_index.path().to_path_buf(),
            self.time_index.path().to_path_buf(),
        ] {
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io(format!("deleting {}", p.display()), e)),
            }
        }
        Ok(())
    }
}
