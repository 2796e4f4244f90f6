//! One log segment: the `.log` file of verbatim batches plus its `.index`
//! and `.timeindex`, with append, positional reads, batch location by
//! offset, index maintenance and the cheap open-time sanity check. File
//! handles are taken from [`crate::file_cache`] on use, so an idle segment
//! holds no descriptor. A segment may carry a file-name suffix (`.cleaned`,
//! `.swap`) while the cleaner builds and installs it.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::batch_scanner::BatchScanner;
use crate::error::{LogError, Result};
use crate::file_cache;
use crate::index_file::IndexLoad;
use crate::offset_index::OffsetIndex;
use crate::record_batch::{BatchHeader, LOG_OVERHEAD};
use crate::time_index::TimeIndex;
use crate::transaction_index::TransactionIndex;
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

/// Path of a segment file with an extra suffix (`""`, `".cleaned"`, ...).
pub fn suffixed_path(dir: &Path, base_offset: i64, ext: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{}.{ext}{suffix}", file_stem(base_offset)))
}

/// What an append changes in a segment's bookkeeping, kept to undo one.
#[derive(Debug, Clone, Copy)]
struct Bookkeeping {
    bytes_since_last_index_entry: u64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    next_offset: i64,
    first_batch_timestamp: Option<i64>,
}

/// A segment and its in-memory bookkeeping.
#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    dir: PathBuf,
    suffix: String,
    log_path: PathBuf,
    size: u64,
    pub(crate) offset_index: OffsetIndex,
    pub(crate) time_index: TimeIndex,
    pub(crate) txn_index: TransactionIndex,
    bytes_since_last_index_entry: u64,
    index_interval_bytes: u64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    next_offset: i64,
    /// Max timestamp of the first batch (what time-based rolling measures
    /// from); `None` until known.
    first_batch_timestamp: Option<i64>,
    /// Wall-clock time the segment object was created (roll fallback when
    /// batches carry no timestamp).
    created_ms: i64,
}

impl Segment {
    fn open_files(
        dir: &Path,
        base_offset: i64,
        cfg: &SegmentConfig,
        truncate: bool,
        suffix: &str,
    ) -> Result<(Segment, File, IndexLoad, IndexLoad)> {
        let log_path = suffixed_path(dir, base_offset, "log", suffix);
        if truncate {
            file_cache::evict(&log_path);
        }
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
            // Leftover indexes of a replaced segment go; the new ones are
            // created when first needed (see `index_file`).
            for ext in ["index", "timeindex"] {
                let p = suffixed_path(dir, base_offset, ext, suffix);
                file_cache::evict(&p);
                match fs::remove_file(&p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(LogError::io(format!("removing {}", p.display()), e));
                    }
                }
            }
        }
        let (offset_index, oload) = OffsetIndex::open(
            &suffixed_path(dir, base_offset, "index", suffix),
            base_offset,
            cfg.segment_index_bytes,
        )?;
        let (time_index, tload) = TimeIndex::open(
            &suffixed_path(dir, base_offset, "timeindex", suffix),
            base_offset,
            cfg.segment_index_bytes,
        )?;
        let txn_path = suffixed_path(dir, base_offset, "txnindex", suffix);
        let txn_index = if truncate {
            TransactionIndex::create(&txn_path)?
        } else {
            TransactionIndex::open(&txn_path)?.0
        };
        let seg = Self::unscanned(
            dir,
            base_offset,
            suffix,
            log_path,
            size,
            (offset_index, time_index, txn_index),
            cfg,
        );
        Ok((seg, file, oload, tload))
    }

    /// A segment of these files whose records are not scanned yet: nothing
    /// is known past its base offset.
    fn unscanned(
        dir: &Path,
        base_offset: i64,
        suffix: &str,
        log_path: PathBuf,
        size: u64,
        (offset_index, time_index, txn_index): (OffsetIndex, TimeIndex, TransactionIndex),
        cfg: &SegmentConfig,
    ) -> Segment {
        Segment {
            base_offset,
            dir: dir.to_path_buf(),
            suffix: suffix.to_string(),
            log_path,
            size,
            offset_index,
            time_index,
            txn_index,
            bytes_since_last_index_entry: 0,
            index_interval_bytes: cfg.index_interval_bytes,
            max_timestamp: -1,
            offset_of_max_timestamp: -1,
            next_offset: base_offset,
            first_batch_timestamp: None,
            created_ms: crate::partition_log::now_ms(),
        }
    }

    /// Creates the first segment of a directory this process just created:
    /// there are no leftover files to replace, so the only system call is
    /// the `.log` file's creation (the indexes are created when first
    /// needed).
    pub fn create_in_new_dir(dir: &Path, base_offset: i64, cfg: &SegmentConfig) -> Result<Segment> {
        let log_path = suffixed_path(dir, base_offset, "log", "");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&log_path)
            .map_err(|e| LogError::io(format!("creating {}", log_path.display()), e))?;
        let indexes = (
            OffsetIndex::absent(
                &suffixed_path(dir, base_offset, "index", ""),
                base_offset,
                cfg.segment_index_bytes,
            ),
            TimeIndex::absent(
                &suffixed_path(dir, base_offset, "timeindex", ""),
                base_offset,
                cfg.segment_index_bytes,
            ),
            TransactionIndex::absent(&suffixed_path(dir, base_offset, "txnindex", "")),
        );
        let seg = Self::unscanned(dir, base_offset, "", log_path, 0, indexes, cfg);
        file_cache::insert(&seg.log_path, file);
        Ok(seg)
    }

    /// Creates a new, empty segment (replacing any leftover files).
    pub fn create(dir: &Path, base_offset: i64, cfg: &SegmentConfig) -> Result<Segment> {
        Self::create_with_suffix(dir, base_offset, cfg, "")
    }

    /// Creates a new, empty segment whose file names carry `suffix`.
    pub fn create_with_suffix(
        dir: &Path,
        base_offset: i64,
        cfg: &SegmentConfig,
        suffix: &str,
    ) -> Result<Segment> {
        let (seg, file, _, _) = Self::open_files(dir, base_offset, cfg, true, suffix)?;
        file_cache::insert(&seg.log_path, file);
        Ok(seg)
    }

    /// Opens an existing segment. Returns the segment and, if it looks
    /// inconsistent, the reason it must be recovered. When the check passes
    /// the segment's next offset and max timestamp are known.
    pub fn open(
        dir: &Path,
        base_offset: i64,
        cfg: &SegmentConfig,
    ) -> Result<(Segment, Option<String>)> {
        Self::open_with_suffix(dir, base_offset, cfg, "")
    }

    /// [`Self::open`] for files named with `suffix`.
    pub fn open_with_suffix(
        dir: &Path,
        base_offset: i64,
        cfg: &SegmentConfig,
        suffix: &str,
    ) -> Result<(Segment, Option<String>)> {
        let (mut seg, file, oload, tload) = Self::open_files(dir, base_offset, cfg, false, suffix)?;
        let problem = seg.sanity_check(Arc::new(file), &oload, &tload);
        Ok((seg, problem))
    }

    fn sanity_check(
        &mut self,
        file: Arc<File>,
        oload: &IndexLoad,
        tload: &IndexLoad,
    ) -> Option<String> {
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
            let mut scan = BatchScanner::new(Arc::clone(&file), start, self.size);
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
        let mut scan = BatchScanner::new(file, start, self.size);
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
    pub fn file(&self) -> Result<Arc<File>> {
        file_cache::get(&self.log_path)
    }
    /// Directory holding the segment.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// File-name suffix (`""` for a live segment).
    pub fn suffix(&self) -> &str {
        &self.suffix
    }
    /// Number of offset index entries.
    pub fn offset_index_entries(&self) -> usize {
        self.offset_index.len()
    }

    /// Max timestamp of the first batch (loaded from the file if needed);
    /// `None` for an empty segment.
    pub fn first_batch_timestamp(&mut self) -> Result<Option<i64>> {
        if self.first_batch_timestamp.is_none() && self.size > 0 {
            let mut scan = self.scanner(0)?;
            if let Some((_, h)) = scan.next_header()? {
                self.first_batch_timestamp = Some(h.max_timestamp);
            }
        }
        Ok(self.first_batch_timestamp)
    }

    /// Whether the segment is old enough to roll by `segment.ms`: the time
    /// since its first batch's timestamp (`at_ms` is the incoming batch's
    /// max timestamp on append, the wall clock otherwise) exceeds
    /// `segment_ms`. Empty segments never roll.
    pub fn should_roll_by_time(&mut self, at_ms: i64, segment_ms: i64) -> Result<bool> {
        if self.size == 0 {
            return Ok(false);
        }
        let from = match self.first_batch_timestamp()? {
            Some(t) if t >= 0 => t,
            _ => self.created_ms,
        };
        Ok(at_ms.saturating_sub(from) > segment_ms)
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
        if pos == 0 {
            self.first_batch_timestamp = Some(h.max_timestamp);
        }
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
    /// write (no user-space buffering), then updates the indexes. On a
    /// failure (a full disk: ENOSPC in the data or an index write) the
    /// append is undone whole: the file is cut back to its previous size and
    /// the indexes and bookkeeping are as before, so nothing refused is
    /// counted and the next append lands at the same offset and position.
    pub fn append(&mut self, buf: &[u8], batches: &[ValidatedBatch]) -> Result<()> {
        let start = self.size;
        let file = self.file()?;
        if let Err(e) = file.write_all_at(buf, start) {
            // A partial write leaves bytes past `start`; cut them, though the
            // next append overwrites them anyway (it writes at `start` too).
            let _ = file.set_len(start);
            return Err(LogError::io(
                format!("appending to {}", self.log_path.display()),
                e,
            ));
        }
        let before = self.bookkeeping();
        self.size = start + buf.len() as u64;
        for b in batches {
            if let Err(e) = self.index_batch(start + b.start as u64, &b.header) {
                self.undo_append(start, before);
                return Err(e);
            }
        }
        Ok(())
    }

    fn bookkeeping(&self) -> Bookkeeping {
        Bookkeeping {
            bytes_since_last_index_entry: self.bytes_since_last_index_entry,
            max_timestamp: self.max_timestamp,
            offset_of_max_timestamp: self.offset_of_max_timestamp,
            next_offset: self.next_offset,
            first_batch_timestamp: self.first_batch_timestamp,
        }
    }

    /// Puts the segment back as it was before an append that wrote `start..`
    /// and then failed. Best effort on disk: bytes or index entries that
    /// cannot be cut now are past what the segment counts, are overwritten
    /// by the next append, and a recovery after a crash drops them.
    fn undo_append(&mut self, start: u64, before: Bookkeeping) {
        if let Ok(file) = self.file() {
            let _ = file.set_len(start);
        }
        self.size = start;
        if let Ok(pos) = u32::try_from(start) {
            let _ = self.offset_index.truncate_to_position(pos);
        }
        let _ = self.time_index.truncate_to_offset(before.next_offset);
        self.bytes_since_last_index_entry = before.bytes_since_last_index_entry;
        self.max_timestamp = before.max_timestamp;
        self.offset_of_max_timestamp = before.offset_of_max_timestamp;
        self.next_offset = before.next_offset;
        self.first_batch_timestamp = before.first_batch_timestamp;
    }

    /// Reads `len` bytes at `pos`.
    pub fn read_at(&self, pos: u64, len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        self.file()?
            .read_exact_at(&mut out, pos)
            .map_err(|e| LogError::io(format!("reading {}", self.log_path.display()), e))?;
        Ok(out)
    }

    /// Bytes of the whole batches from `pos` (a batch start) that fit in
    /// `limit` bytes. The scan starts at the indexed batch nearest below
    /// `pos + limit`, so it reads a few batch lengths, not the records: a
    /// zero-copy fetch needs the exact end without reading what it sends.
    pub fn whole_batches_within(&self, pos: u64, limit: u64) -> Result<u64> {
        let cap = pos.saturating_add(limit).min(self.size);
        let indexed = self
            .offset_index
            .floor_position(u32::try_from(cap).unwrap_or(u32::MAX));
        let file = self.file()?;
        let mut at = u64::from(indexed).max(pos);
        let mut overhead = [0u8; LOG_OVERHEAD];
        while at + LOG_OVERHEAD as u64 <= cap {
            file.read_exact_at(&mut overhead, at)
                .map_err(|e| LogError::io(format!("reading {}", self.log_path.display()), e))?;
            let (_, len) = BatchHeader::parse_overhead(&overhead)?;
            let Ok(len) = u64::try_from(len) else {
                return Err(LogError::corrupt(format!(
                    "negative batch length at position {at} of {}",
                    self.log_path.display()
                )));
            };
            let end = at + LOG_OVERHEAD as u64 + len;
            if end > cap {
                break;
            }
            at = end;
        }
        Ok(at - pos)
    }

    /// Scanner over the segment's batches from `pos`.
    pub fn scanner(&self, pos: u64) -> Result<BatchScanner> {
        Ok(BatchScanner::new(self.file()?, pos, self.size))
    }

    /// Finds the batch containing `offset` (or the first batch after it);
    /// `None` if the segment has nothing at or after `offset`.
    pub fn locate(&self, offset: i64) -> Result<Option<(u64, BatchHeader)>> {
        let (_, pos) = self.offset_index.lookup(offset);
        let mut scan = self.scanner(u64::from(pos))?;
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
        self.file()?
            .set_len(size)
            .map_err(|e| LogError::io(format!("truncating {}", self.log_path.display()), e))?;
        self.size = size;
        Ok(())
    }

    /// Drops the batch containing `offset` and every batch after it, as
    /// Kafka's `LogSegment.truncateTo` does, then rebuilds the indexes and
    /// bookkeeping from what is left. Returns the bytes removed.
    pub fn truncate_to(&mut self, offset: i64) -> Result<u64> {
        let Some((pos, _)) = self.locate(offset)? else {
            return Ok(0);
        };
        let removed = self.size - pos;
        self.txn_index.truncate_to(offset)?;
        self.truncate_log(pos)?;
        self.reset_indexes()?;
        let mut scan = self.scanner(0)?;
        while let Some((at, h)) = scan.next_header()? {
            self.index_batch(at, &h)?;
        }
        Ok(removed)
    }

    /// Clears indexes and bookkeeping before a full rebuild.
    pub(crate) fn reset_indexes(&mut self) -> Result<()> {
        self.offset_index.reset()?;
        self.time_index.reset()?;
        self.bytes_since_last_index_entry = 0;
        self.max_timestamp = -1;
        self.offset_of_max_timestamp = -1;
        self.next_offset = self.base_offset;
        self.first_batch_timestamp = None;
        Ok(())
    }

    /// Called when the segment stops being the active one: records the final
    /// time index entry and trims the index files.
    pub fn seal(&mut self) -> Result<()> {
        if self.offset_of_max_timestamp >= 0 {
            self.time_index
                .maybe_append(self.max_timestamp, self.offset_of_max_timestamp, true)?;
        }
        self.trim_indexes()
    }

    /// Trims both index files to their entries. An empty segment's indexes
    /// stay uncreated if they are: the open-time check asks for index files
    /// only when the log has data, so a partition never written to never
    /// creates them.
    pub fn trim_indexes(&self) -> Result<()> {
        if self.size == 0 {
            self.offset_index.clear()?;
            return self.time_index.clear();
        }
        self.offset_index.trim()?;
        self.time_index.trim()
    }

    /// fsyncs log and indexes.
    pub fn flush(&self) -> Result<()> {
        self.file()?
            .sync_data()
            .map_err(|e| LogError::io(format!("syncing {}", self.log_path.display()), e))?;
        self.offset_index.flush()?;
        self.time_index.flush()?;
        self.txn_index.flush()
    }

    /// Renames the three files to carry `suffix` instead of the current one
    /// (log file last, so a `.log<suffix>` file implies the indexes moved).
    pub fn change_suffix(&mut self, suffix: &str) -> Result<()> {
        let (dir, base) = (self.dir.clone(), self.base_offset);
        self.offset_index
            .rename(&suffixed_path(&dir, base, "index", suffix))?;
        self.time_index
            .rename(&suffixed_path(&dir, base, "timeindex", suffix))?;
        self.txn_index
            .rename(&suffixed_path(&dir, base, "txnindex", suffix))?;
        let to = suffixed_path(&dir, base, "log", suffix);
        file_cache::evict(&self.log_path);
        file_cache::evict(&to);
        fs::rename(&self.log_path, &to).map_err(|e| {
            LogError::io(
                format!("renaming {} to {}", self.log_path.display(), to.display()),
                e,
            )
        })?;
        self.log_path = to;
        self.suffix = suffix.to_string();
        Ok(())
    }

    /// Deletes the segment's files. Readers holding a handle keep reading
    /// the unlinked file until they drop it.
    pub fn delete_files(self) -> Result<()> {
        self.txn_index.delete()?;
        for p in [
            self.log_path.clone(),
            self.offset_index.path().to_path_buf(),
            self.time_index.path().to_path_buf(),
        ] {
            file_cache::evict(&p);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io(format!("deleting {}", p.display()), e)),
            }
        }
        Ok(())
    }
}
