//! A partition's log: the ordered segments of `<topic>-<partition>/`, with
//! append (validate, recompress, dedupe, assign offsets, roll, write),
//! batch-aligned reads, timestamp and leader-epoch lookups, retention,
//! DeleteRecords, compaction hand-off, flush policy, flush/close, and the
//! open-time loading and crash recovery of segments, producer state and
//! epoch cache.

use std::collections::HashMap;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cleaner::{self, CleanOutput, CleanPlan, CleanStats, CleanerSegment, SegmentSummary};
use crate::compression;
use crate::error::{LogError, Result, codes};
use crate::file_cache;
use crate::flush_policy::FlushPolicy;
use crate::leader_epoch::{CheckpointLoad, LeaderEpochCache};
pub use crate::log_config::LogConfig;
use crate::offset_checkpoint;
use crate::producer_state::{CompletedTxn, ProducerStateManager, SequenceCheck};
use crate::recompress;
use crate::record_batch::{BatchHeader, LOG_OVERHEAD};
use crate::recovery::recover_segment;
use crate::retention::{self, RetentionRules, SegmentFacts};
use crate::segment::Segment;
use crate::segment_swap;
use crate::timestamp_search;
use crate::transaction_index::AbortedTxn;
use crate::txn_marker::{self, Marker};
use crate::validator::{self, ValidateOptions, ValidatedBatch};

/// Result of an append, as the Produce response needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    /// Offset assigned to the first record.
    pub base_offset: i64,
    /// Offset of the last record.
    pub last_offset: i64,
    /// Log append time, or -1 for CreateTime.
    pub log_append_time: i64,
    /// True if the batch was a retried duplicate and was not written again.
    pub duplicate: bool,
}

/// Current wall clock in milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The log of one partition.
#[derive(Debug)]
pub struct PartitionLog {
    dir: PathBuf,
    config: LogConfig,
    segments: Vec<Segment>,
    producers: ProducerStateManager,
    epochs: LeaderEpochCache,
    report: Vec<String>,
    first_dirty_segment: Option<usize>,
    /// Entries of the directory (segment files) were created or removed
    /// since its last fsync; the next flush fsyncs it. A new log starts
    /// dirty: as in Kafka, its directory is fsynced on its first flush, not
    /// when it is created.
    dir_dirty: bool,
    /// This log created its own directory, whose entry in the parent is not
    /// known to be durable yet; the first flush fsyncs the parent.
    /// [`PartitionLog::create_many`] fsyncs the parents of all the logs it
    /// creates once, so for those this stays false.
    parent_dirty: bool,
    /// The leader-epoch checkpoint was rewritten without an fsync (see
    /// [`LeaderEpochCache::write_unsynced`]), or read after a crash that may
    /// have left it unsynced; the next flush fsyncs it.
    epochs_unsynced: bool,
    /// A leader-epoch checkpoint file holding the cache's entries exists
    /// (every change of the cache is written at once), so close need only
    /// fsync it rather than write it again.
    epochs_on_disk: bool,
    /// The cache has an entry the checkpoint does not: an epoch assigned
    /// while the log was empty, written with the next append or flush (see
    /// [`PartitionLog::assign_leader_epoch`]).
    epochs_unwritten: bool,
    closed: bool,
    log_start_offset: i64,
    /// Kafka's recovery point: every offset below it is fsynced (data,
    /// indexes and the directory entries naming them), so after a crash
    /// only the segments holding offsets at or above it are recovered.
    /// Advanced only by a flush, never by an append.
    recovery_point: i64,
    flush_policy: FlushPolicy,
    /// Cleaner's first dirty offset (persisted).
    cleaner_checkpoint: Option<i64>,
    /// Earliest tombstone delete horizon in cleaned segments; outer `None`
    /// = not known yet (computed on the first cleaning after open).
    tombstone_expiry: Option<Option<i64>>,
}

/// Kafka's file of the topic id in each partition directory.
const PARTITION_METADATA: &str = "partition.metadata";

fn parse_stem(name: &str, ext: &str) -> Option<i64> {
    let stem = name.strip_suffix(ext)?.strip_suffix('.')?;
    if stem.len() != 20 || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok()
}

impl PartitionLog {
    /// Opens (creating if needed) the partition directory `dir`, without a
    /// recovery point: after an unclean shutdown every segment is recovered.
    pub fn open(
        dir: impl AsRef<Path>,
        config: LogConfig,
        clean_shutdown: bool,
    ) -> Result<PartitionLog> {
        Self::open_at(dir, config, clean_shutdown, None)
    }

    /// Opens (creating if needed) the partition directory `dir`. With
    /// `clean_shutdown == false` every segment that may hold an offset at or
    /// above `recovery_point` (all of them when `None`, as Kafka does without
    /// a checkpoint) is recovered; a segment failing its sanity check is
    /// recovered in either case.
    pub fn open_at(
        dir: impl AsRef<Path>,
        config: LogConfig,
        clean_shutdown: bool,
        recovery_point: Option<i64>,
    ) -> Result<PartitionLog> {
        config.validate()?;
        let checkpointed_rp = recovery_point.unwrap_or(0).max(0);
        let dir = dir.as_ref().to_path_buf();
        if create_dir(&dir)? {
            return Self::in_new_dir(dir, config, true);
        }
        let mut report = Vec::new();
        segment_swap::recover(&dir, &mut report)?;

        // Inventory of the directory.
        let mut log_bases = Vec::new();
        let mut index_files = Vec::new();
        let mut snapshots = Vec::new();
        let listing = fs::read_dir(&dir)
            .map_err(|e| LogError::io(format!("listing {}", dir.display()), e))?;
        for entry in listing {
            let entry = entry.map_err(|e| LogError::io(format!("listing {}", dir.display()), e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(b) = parse_stem(&name, "log") {
                log_bases.push(b);
            } else if let Some(b) = parse_stem(&name, "index")
                .or_else(|| parse_stem(&name, "timeindex"))
                .or_else(|| parse_stem(&name, "txnindex"))
            {
                index_files.push((b, entry.path()));
            } else if let Some(o) = parse_stem(&name, "snapshot") {
                snapshots.push((o, entry.path()));
            } else if name.ends_with(".tmp") {
                let _ = fs::remove_file(entry.path());
            }
        }
        log_bases.sort_unstable();
        for (b, p) in index_files {
            if log_bases.binary_search(&b).is_err() {
                report.push(format!("removed orphan index {}", p.display()));
                let _ = fs::remove_file(&p);
            }
        }

        let scfg = config.segment_config();
        let (mut epochs, epochs_load) = LeaderEpochCache::open(&dir);
        let epochs_loaded = epochs_load == CheckpointLoad::Loaded;
        let mut epochs_changed = false;
        let mut segments: Vec<Segment> = Vec::with_capacity(log_bases.len().max(1));
        let count = log_bases.len();
        let mut cut_at: Option<usize> = None;
        let mut first_recovered: Option<usize> = None;
        for (i, base) in log_bases.iter().copied().enumerate() {
            let (mut seg, problem) = Segment::open(&dir, base, &scfg)?;
            let is_last = i + 1 == count;
            // Kafka's `logSegments(recoveryPoint, MAX)`: the segment holding
            // the recovery point and every later one.
            let unflushed = !clean_shutdown
                && log_bases
                    .get(i + 1)
                    .is_none_or(|&next| next > checkpointed_rp);
            let needs = match (&problem, unflushed) {
                (Some(p), _) => Some(p.clone()),
                (None, true) => Some(format!(
                    "unclean shutdown, unflushed after recovery point {checkpointed_rp}"
                )),
                (None, false) => None,
            };
            if let Some(why) = needs {
                let rec = recover_segment(&mut seg, |h| {
                    epochs_changed |= epochs.assign(h.partition_leader_epoch, h.base_offset);
                })?;
                let mut line = format!(
                    "recovered segment {} ({why}): {} batches, {} valid bytes",
                    seg.log_path().display(),
                    rec.batches,
                    rec.valid_bytes
                );
                if rec.truncated() {
                    line.push_str(&format!(
                        ", truncated {} bytes: {}",
                        rec.truncated_bytes,
                        rec.reason.clone().unwrap_or_default()
                    ));
                }
                report.push(line);
                first_recovered.get_or_insert(segments.len());
                let next_base = log_bases.get(i + 1).copied();
                let broken_chain = next_base.is_some_and(|nb| seg.next_offset() > nb);
                segments.push(seg);
                if !is_last && (rec.truncated() || broken_chain) {
                    cut_at = Some(i + 1);
                    break;
                }
            } else {
                segments.push(seg);
            }
        }
        if let Some(from) = cut_at {
            for base in &log_bases[from..] {
                let (seg, _) = Segment::open(&dir, *base, &scfg)?;
                report.push(format!(
                    "deleted segment {} after a corrupt segment",
                    seg.log_path().display()
                ));
                seg.delete_files()?;
            }
        }
        // After a crash the directory may hold entries the dead process never
        // fsynced (a rolled segment, say); they are made durable by the first
        // flush, as a new log's are. A clean shutdown flushed them.
        let mut dir_dirty = !clean_shutdown || cut_at.is_some();
        if segments.is_empty() {
            segments.push(Segment::create(&dir, 0, &scfg)?);
            dir_dirty = true;
        }

        let first_base = segments.first().map_or(0, |s| s.base_offset());
        let leo = segments.last().map_or(0, |s| s.next_offset());
        // A clean shutdown flushed everything. After a crash the checkpoint
        // holds: what recovery rewrote (indexes, a cut tail) is fsynced by
        // the next flush, which only then moves the point.
        let recovery_point = if clean_shutdown {
            leo
        } else {
            checkpointed_rp.min(leo)
        };
        let checkpointed = offset_checkpoint::read(&dir, offset_checkpoint::LOG_START_OFFSET);
        let log_start_offset = checkpointed.unwrap_or(first_base).max(first_base).min(leo);
        let cleaner_checkpoint = offset_checkpoint::read(&dir, offset_checkpoint::CLEANER_OFFSET);
        let mut log = PartitionLog {
            dir,
            config,
            segments,
            producers: ProducerStateManager::new(),
            epochs,
            report,
            first_dirty_segment: first_recovered,
            dir_dirty,
            parent_dirty: false,
            epochs_unsynced: epochs_loaded && !clean_shutdown,
            epochs_on_disk: epochs_loaded,
            epochs_unwritten: false,
            closed: false,
            log_start_offset,
            recovery_point,
            flush_policy: FlushPolicy::new(now_ms()),
            cleaner_checkpoint,
            tombstone_expiry: None,
        };
        let leo = log.log_end_offset();
        if log.epochs.truncate_from_end(leo) {
            epochs_changed = true;
        }
        if !epochs_loaded {
            log.epochs.clear();
            // An unreadable file is replaced by the rebuilt cache; a missing
            // one stays missing until there is an epoch to record (a new
            // log has none, and writing an empty checkpoint per partition
            // made creating a topic of thousands of partitions slow).
            epochs_changed = epochs_load == CheckpointLoad::Invalid;
        }

        // Producer state: newest usable snapshot, then replay headers.
        snapshots.sort_unstable_by_key(|s| s.0);
        let mut snapshot_offset: Option<i64> = None;
        for (off, path) in snapshots.iter().rev() {
            if snapshot_offset.is_none() && *off <= leo && *off >= log.log_start_offset() {
                match fs::read(path)
                    .map_err(LogError::from)
                    .and_then(|d| ProducerStateManager::decode(&d))
                {
                    Ok(state) => {
                        log.producers = state;
                        snapshot_offset = Some(*off);
                        continue;
                    }
                    Err(e) => log.report.push(format!(
                        "ignored snapshot {}: {}",
                        path.display(),
                        e.message
                    )),
                }
            }
            if Some(*off) != snapshot_offset {
                let _ = fs::remove_file(path);
            }
        }
        let producer_from = snapshot_offset.unwrap_or_else(|| log.log_start_offset());
        let scan_from = if epochs_loaded {
            producer_from
        } else {
            log.log_start_offset()
        };
        let mut producers = std::mem::take(&mut log.producers);
        let mut epochs = log.epochs.clone();
        let mut aborted: Vec<AbortedTxn> = Vec::new();
        log.for_each_batch_from(scan_from, |h, marker| {
            if h.base_offset >= producer_from
                && let Some(done) = producers.update(h, marker)
                && !done.commit
            {
                aborted.push(done.aborted());
            }
            epochs_changed |= epochs.assign(h.partition_leader_epoch, h.base_offset);
        })?;
        log.producers = producers;
        log.epochs = epochs;
        // The aborted-transaction indexes agree with the log: entries whose
        // marker a crash lost go, and aborts replayed but missing (an entry
        // a crash lost) are written again.
        for seg in &mut log.segments {
            let end = seg.next_offset();
            seg.txn_index.truncate_to(end)?;
        }
        for entry in aborted {
            log.index_abort(entry)?;
        }
        if epochs_changed {
            // Re-derived from the log, so it can be re-derived again if a
            // power cut loses it before the next flush.
            log.write_epochs()?;
        }
        Ok(log)
    }

    /// Creates the logs of a new topic's partitions at `dirs`, each directory
    /// made here, with `partition_metadata` (Kafka's `partition.metadata`:
    /// the topic id) written into each. Every parent directory is fsynced
    /// once, so the new entries are durable before this returns at the cost
    /// of one fsync per log dir, not one per partition. A directory that
    /// already exists (left by an earlier topic of the name) is opened and
    /// recovered whole instead. On an error the logs opened so far are closed.
    pub fn create_many(
        dirs: &[PathBuf],
        config: LogConfig,
        partition_metadata: Option<&[u8]>,
    ) -> Result<Vec<PartitionLog>> {
        config.validate()?;
        let mut fresh = Vec::with_capacity(dirs.len());
        for dir in dirs {
            fresh.push(create_dir(dir)?);
            if let Some(data) = partition_metadata {
                let path = dir.join(PARTITION_METADATA);
                fs::write(&path, data)
                    .map_err(|e| LogError::io(format!("writing {}", path.display()), e))?;
            }
        }
        let mut synced: Vec<&Path> = Vec::new();
        for parent in dirs.iter().filter_map(|d| d.parent()) {
            if !synced.contains(&parent) {
                segment_swap::sync_dir(parent)?;
                synced.push(parent);
            }
        }
        let mut logs = Vec::with_capacity(dirs.len());
        for (dir, fresh) in dirs.iter().zip(fresh) {
            logs.push(if fresh {
                Self::in_new_dir(dir.clone(), config, false)?
            } else {
                Self::open_at(dir, config, false, None)?
            });
        }
        Ok(logs)
    }

    /// The empty log of a directory this process just created: nothing in it
    /// to inventory or recover, so the only system call is the first
    /// segment's creation. `parent_dirty`: the directory's entry in its
    /// parent still needs an fsync (done by the first flush).
    fn in_new_dir(dir: PathBuf, config: LogConfig, parent_dirty: bool) -> Result<PartitionLog> {
        let segment = Segment::create_in_new_dir(&dir, 0, &config.segment_config())?;
        Ok(PartitionLog {
            epochs: LeaderEpochCache::absent(&dir),
            dir,
            config,
            segments: vec![segment],
            producers: ProducerStateManager::new(),
            report: Vec::new(),
            first_dirty_segment: None,
            dir_dirty: true,
            parent_dirty,
            epochs_unsynced: false,
            epochs_on_disk: false,
            epochs_unwritten: false,
            closed: false,
            log_start_offset: 0,
            recovery_point: 0,
            flush_policy: FlushPolicy::new(now_ms()),
            cleaner_checkpoint: None,
            tombstone_expiry: None,
        })
    }

    /// Calls `f` for every batch header whose batch ends at or after
    /// `from`, with what a transaction marker says (only a control batch is
    /// read whole).
    fn for_each_batch_from(
        &self,
        from: i64,
        mut f: impl FnMut(&BatchHeader, Option<Marker>),
    ) -> Result<()> {
        let start_idx = self.segment_index_for(from);
        for seg in &self.segments[start_idx..] {
            if seg.next_offset() <= from {
                continue;
            }
            let pos = if seg.base_offset() <= from {
                seg.offset_index.lookup(from).1
            } else {
                0
            };
            let mut scan = seg.scanner(u64::from(pos))?;
            while let Some((at, h)) = scan.next_header()? {
                if h.last_offset() < from {
                    continue;
                }
                let marker = if h.is_control() && h.has_producer_id() {
                    let bytes = seg.read_at(at, h.total_size())?;
                    txn_marker::parse(&h, &bytes)?
                } else {
                    None
                };
                f(&h, marker);
            }
        }
        Ok(())
    }

    /// Records an abort in the index of the segment holding its marker.
    fn index_abort(&mut self, entry: AbortedTxn) -> Result<()> {
        let idx = self.segment_index_for(entry.last_offset);
        let seg = &mut self.segments[idx];
        if !seg.txn_index.contains(entry.last_offset) {
            seg.txn_index.append(entry)?;
        }
        Ok(())
    }

    fn segment_index_for(&self, offset: i64) -> usize {
        self.segments
            .partition_point(|s| s.base_offset() <= offset)
            .saturating_sub(1)
    }

    fn ensure_open(&self) -> Result<()> {
        if self.closed {
            return Err(LogError::storage(format!(
                "log {} is closed",
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// Directory of the log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// Configuration in force.
    pub fn config(&self) -> &LogConfig {
        &self.config
    }
    /// First offset in the log (the low watermark: DeleteRecords and
    /// retention advance it; it may sit in the middle of a segment).
    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }
    /// Next offset to be assigned.
    pub fn log_end_offset(&self) -> i64 {
        self.segments.last().map_or(0, |s| s.next_offset())
    }
    /// Base offsets of all segments.
    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.segments.iter().map(|s| s.base_offset()).collect()
    }
    /// Base offset of the segment appends go to: reads from it are almost
    /// always served from the page cache.
    pub fn active_segment_base_offset(&self) -> i64 {
        self.segments.last().map_or(0, |s| s.base_offset())
    }
    /// Total bytes of all `.log` files.
    pub fn size_bytes(&self) -> u64 {
        self.segments.iter().map(|s| s.size()).sum()
    }
    /// What open-time loading and recovery did (one line per event).
    pub fn recovery_report(&self) -> &[String] {
        &self.report
    }
    /// Producer state (read-only).
    pub fn producer_state(&self) -> &ProducerStateManager {
        &self.producers
    }
    /// Forgets producers idle `expiration_ms` before `now_ms` without an open transaction
    /// (`producer.id.expiration.ms`); returns how many. The next snapshot leaves them out.
    pub fn remove_expired_producers(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        self.producers.remove_expired(now_ms, expiration_ms)
    }
    /// Leader epoch entries (epoch, start offset).
    pub fn leader_epochs(&self) -> &[(i32, i64)] {
        self.epochs.entries()
    }
    /// True after [`Self::close`].
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Validates and appends the `records` of a Produce request.
    pub fn append(
        &mut self,
        records: Vec<u8>,
        leader_epoch: i32,
        now_ms: Option<i64>,
    ) -> Result<AppendInfo> {
        self.append_from(records, leader_epoch, now_ms, false)
    }

    /// [`Self::append`] of the broker's own coordinator, whose
    /// transactional batches carry no sequence (Kafka's origin COORDINATOR).
    pub fn append_from_coordinator(
        &mut self,
        records: Vec<u8>,
        leader_epoch: i32,
        now_ms: Option<i64>,
    ) -> Result<AppendInfo> {
        self.append_from(records, leader_epoch, now_ms, true)
    }

    fn append_from(
        &mut self,
        records: Vec<u8>,
        leader_epoch: i32,
        now_ms: Option<i64>,
        from_coordinator: bool,
    ) -> Result<AppendInfo> {
        self.ensure_open()?;
        let now = now_ms.unwrap_or_else(crate::partition_log::now_ms);
        let opts = ValidateOptions {
            max_message_bytes: self.config.max_message_bytes,
            compacted: self.config.cleanup_policy.compact,
            log_dir: &self.dir,
            timestamp_bounds: (!self.config.log_append_time).then(|| {
                (
                    now.saturating_sub(self.config.timestamp_before_max_ms),
                    now.saturating_add(self.config.timestamp_after_max_ms),
                )
            }),
            from_coordinator,
        };
        let batches = validator::validate_with(&records, &opts)?;
        if let [single] = batches.as_slice()
            && single.header.has_producer_id()
            && let SequenceCheck::Duplicate(dup) = self.producers.check(&single.header)?
        {
            return Ok(AppendInfo {
                base_offset: dup.first_offset,
                last_offset: dup.last_offset,
                log_append_time: dup.append_time,
                duplicate: true,
            });
        }
        let (mut records, mut batches) = self.apply_topic_compression(records, batches)?;
        let append_time = self.config.log_append_time.then_some(now);
        let base_offset = self.log_end_offset();
        let next = validator::assign_in_place(
            &mut records,
            &mut batches,
            base_offset,
            leader_epoch,
            append_time,
        )?;
        let last_offset = next - 1;
        self.write_batches(&records, &batches, &[(leader_epoch, base_offset)])?;
        Ok(AppendInfo {
            base_offset,
            last_offset,
            log_append_time: append_time.unwrap_or(-1),
            duplicate: false,
        })
    }

    /// Appends batches as the leader wrote them, a follower's append: their
    /// offsets, leader epochs, producer ids and timestamps are kept, not
    /// assigned, and the records are not decoded again. The first batch must
    /// start at or after the log end offset (a compacted leader leaves gaps);
    /// an earlier one means the follower has not truncated to the leader yet.
    pub fn append_as_follower(&mut self, records: Vec<u8>) -> Result<AppendInfo> {
        self.ensure_open()?;
        let batches = validator::validate_replicated(&records)?;
        let (Some(first), Some(last)) = (batches.first(), batches.last()) else {
            return Err(LogError::invalid_record(
                "replicated records contain no batch",
            ));
        };
        let (base_offset, last_offset) = (first.header.base_offset, last.header.last_offset());
        let leo = self.log_end_offset();
        if base_offset < leo {
            return Err(LogError::new(
                codes::OFFSET_OUT_OF_RANGE,
                format!(
                    "replicated batches start at offset {base_offset}, below the log end offset {leo}"
                ),
            ));
        }
        let epochs: Vec<(i32, i64)> = batches
            .iter()
            .map(|b| (b.header.partition_leader_epoch, b.header.base_offset))
            .collect();
        self.write_batches(&records, &batches, &epochs)?;
        Ok(AppendInfo {
            base_offset,
            last_offset,
            log_append_time: -1,
            duplicate: false,
        })
    }

    /// Writes a transaction marker for `producer_id` (the leader's part of
    /// WriteTxnMarkers): checks its epochs against the producer state, then
    /// appends it at the log end. Returns where it went and the transaction
    /// it ended (`None` when the producer had none open here).
    pub fn append_marker(
        &mut self,
        producer_id: i64,
        producer_epoch: i16,
        marker: Marker,
        leader_epoch: i32,
        now_ms: Option<i64>,
    ) -> Result<(AppendInfo, Option<CompletedTxn>)> {
        self.ensure_open()?;
        self.producers
            .check_marker(producer_id, producer_epoch, marker)?;
        let open_before = self
            .producers
            .get(producer_id)
            .and_then(|e| e.current_txn_first_offset);
        let now = now_ms.unwrap_or_else(crate::partition_log::now_ms);
        let mut records = txn_marker::build(producer_id, producer_epoch, marker, now)?;
        let mut batches = validator::validate_replicated(&records)?;
        let base_offset = self.log_end_offset();
        validator::assign_in_place(&mut records, &mut batches, base_offset, leader_epoch, None)?;
        self.write_batches(&records, &batches, &[(leader_epoch, base_offset)])?;
        let completed = open_before.map(|first_offset| CompletedTxn {
            producer_id,
            first_offset,
            marker_offset: base_offset,
            commit: marker.commit,
            last_stable_offset: self
                .producers
                .first_open_offset()
                .unwrap_or(base_offset + 1),
        });
        Ok((
            AppendInfo {
                base_offset,
                last_offset: base_offset,
                log_append_time: -1,
                duplicate: false,
            },
            completed,
        ))
    }

    /// The last stable offset for high watermark `hw` (read_committed
    /// consumers read below it).
    pub fn last_stable_offset(&mut self, hw: i64) -> i64 {
        self.producers.last_stable_offset(hw)
    }

    /// The aborted transactions a read_committed fetch of `[from, upper)`
    /// must list, as (producer id, first offset). Only segments that can
    /// hold their markers are read: the one holding `from` and later ones
    /// starting below `upper`.
    pub fn aborted_transactions(&self, from: i64, upper: i64) -> Vec<(i64, i64)> {
        let mut found = Vec::new();
        let start = self.segment_index_for(from);
        for seg in &self.segments[start..] {
            seg.txn_index.collect(from, upper, &mut found);
        }
        found
            .into_iter()
            .map(|e| (e.producer_id, e.first_offset))
            .collect()
    }

    /// Aborted transactions that began below `end`, by producer: (first
    /// offset, marker offset) (what a cleaning pass removes).
    fn aborted_before(&self, end: i64) -> HashMap<i64, Vec<(i64, i64)>> {
        let mut out: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        for seg in &self.segments {
            for e in seg.txn_index.entries() {
                if e.first_offset < end {
                    out.entry(e.producer_id)
                        .or_default()
                        .push((e.first_offset, e.last_offset));
                }
            }
        }
        out
    }

    /// Open transactions as (producer id, first offset), oldest first.
    pub fn open_transactions(&self) -> Vec<(i64, i64)> {
        self.producers.open_transactions()
    }

    /// Removes every batch at or after `offset` (a batch containing it goes
    /// whole), as a follower truncates to the point where it and the new
    /// leader diverge (KIP-101/KIP-279). The leader epochs from there on and
    /// the producer state of the removed batches go too. Returns the new log
    /// end offset. Truncating to the log start offset or below empties the
    /// log ([`Self::truncate_fully_and_start_at`]).
    pub fn truncate_to(&mut self, offset: i64) -> Result<i64> {
        self.ensure_open()?;
        if offset >= self.log_end_offset() {
            // Nothing to cut, but an epoch this replica assigned when it led (at its log end, before
            // it appended anything) must go, as Kafka's truncateTo does: the new leader never had it,
            // and a follower that kept it would name it as its last fetched epoch, be told to
            // truncate to where it already ends, and fetch that way for good, out of the ISR.
            let leo = self.log_end_offset();
            if self.epochs.truncate_from_end(leo) {
                self.persist_epochs()?;
            }
            return Ok(leo);
        }
        if offset <= self.log_start_offset {
            self.truncate_fully_and_start_at(offset)?;
            return Ok(offset);
        }
        {
            let idx = self.segment_index_for(offset);
            let later: Vec<Segment> = self.segments.drain(idx + 1..).collect();
            for seg in later {
                seg.delete_files()?;
            }
            let seg = &mut self.segments[idx];
            seg.truncate_to(offset)?;
            seg.flush()?;
        }
        self.dir_dirty = true;
        self.first_dirty_segment = self
            .first_dirty_segment
            .map(|d| d.min(self.segments.len() - 1));
        let leo = self.log_end_offset();
        self.recovery_point = self.recovery_point.min(leo);
        if self.epochs.truncate_from_end(leo) {
            self.persist_epochs()?;
        }
        // Producer state as of the new end: replayed from the start of the log.
        let mut producers = ProducerStateManager::new();
        let from = self.log_start_offset;
        self.for_each_batch_from(from, |h, marker| {
            producers.update(h, marker);
        })?;
        self.producers = producers;
        Ok(leo)
    }

    /// Puts validated batches, offsets assigned, at the end of the log: rolls
    /// first when the active segment is full or old enough, then appends,
    /// records producer state and the (epoch, start offset) pairs, and
    /// flushes when the flush policy says so. Shared by the leader's and the
    /// follower's append.
    fn write_batches(
        &mut self,
        records: &[u8],
        batches: &[ValidatedBatch],
        epochs: &[(i32, i64)],
    ) -> Result<()> {
        let (Some(first), Some(last)) = (batches.first(), batches.last()) else {
            return Ok(());
        };
        let (base_offset, last_offset) = (first.header.base_offset, last.header.last_offset());
        if records.len() as u64 > self.config.segment_bytes {
            return Err(LogError::new(
                codes::RECORD_LIST_TOO_LARGE,
                format!(
                    "append of {} bytes is larger than segment_bytes {}",
                    records.len(),
                    self.config.segment_bytes
                ),
            ));
        }
        let max_ts = batches
            .iter()
            .map(|b| b.header.max_timestamp)
            .max()
            .unwrap_or(-1);
        let (segment_ms, segment_bytes) = (self.config.segment_ms, self.config.segment_bytes);
        let active = self
            .segments
            .last_mut()
            .ok_or_else(|| LogError::storage("log has no segments"))?;
        if active.should_roll(records.len() as u64, last_offset, segment_bytes)
            || active.should_roll_by_time(max_ts, segment_ms)?
        {
            self.roll(base_offset)?;
        }
        // The epoch checkpoint is written before the data: if it cannot be
        // (a full disk) nothing is appended. An entry starting at the log end
        // with no data after it (the data write failing next) is harmless:
        // it is what the next append of that epoch assigns anyway.
        let mut epochs_changed = false;
        for &(epoch, start) in epochs {
            epochs_changed |= self.epochs.assign(epoch, start);
        }
        if (epochs_changed || self.epochs_unwritten)
            && let Err(e) = self.write_epochs()
        {
            self.epochs.truncate_from_end(base_offset);
            return Err(e);
        }
        let idx = self.segments.len() - 1;
        let active = self
            .segments
            .last_mut()
            .ok_or_else(|| LogError::storage("log has no segments"))?;
        active.append(records, batches)?;
        self.first_dirty_segment = Some(self.first_dirty_segment.map_or(idx, |d| d.min(idx)));
        let mut aborted: Vec<AbortedTxn> = Vec::new();
        for b in batches {
            let marker = if b.header.is_control() && b.header.has_producer_id() {
                txn_marker::parse(&b.header, &records[b.start..b.start + b.size])?
            } else {
                None
            };
            if let Some(done) = self.producers.update(&b.header, marker)
                && !done.commit
            {
                aborted.push(done.aborted());
            }
        }
        for entry in aborted {
            self.index_abort(entry)?;
        }
        if self
            .flush_policy
            .on_append(last_offset + 1 - base_offset, self.config.flush_messages)
        {
            self.flush_inner()?;
        }
        Ok(())
    }

    /// Empties the log and starts it again at `offset` (log start and end),
    /// as a follower does whose log the leader's no longer overlaps.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.ensure_open()?;
        let old: Vec<Segment> = std::mem::take(&mut self.segments);
        for seg in old {
            seg.delete_files()?;
        }
        self.segments.push(Segment::create(
            &self.dir,
            offset,
            &self.config.segment_config(),
        )?);
        self.log_start_offset = offset;
        offset_checkpoint::write(&self.dir, offset_checkpoint::LOG_START_OFFSET, offset)?;
        self.dir_dirty = true;
        self.first_dirty_segment = Some(0);
        // Nothing below `offset` exists any more, and nothing at it yet.
        self.recovery_point = offset;
        self.epochs.clear();
        self.persist_epochs()?;
        self.producers = ProducerStateManager::new();
        Ok(())
    }

    /// Recompresses batches whose codec differs from the topic's
    /// `compression.type` (no-op for `producer`).
    fn apply_topic_compression(
        &self,
        records: Vec<u8>,
        batches: Vec<ValidatedBatch>,
    ) -> Result<(Vec<u8>, Vec<ValidatedBatch>)> {
        let topic = self.config.compression;
        if batches
            .iter()
            .all(|b| recompress::target_codec(topic, b.header.compression()).is_none())
        {
            return Ok((records, batches));
        }
        let mut out = Vec::with_capacity(records.len());
        let mut new_batches = Vec::with_capacity(batches.len());
        for b in batches {
            let bytes = &records[b.start..b.start + b.size];
            let start = out.len();
            match recompress::target_codec(topic, b.header.compression()) {
                None => out.extend_from_slice(bytes),
                Some(target) => {
                    let rebuilt = recompress::recompress_batch(
                        bytes,
                        &b.header,
                        target,
                        self.config.compression_level,
                    )?;
                    if rebuilt.len() > self.config.max_message_bytes {
                        return Err(LogError::new(
                            codes::MESSAGE_TOO_LARGE,
                            format!(
                                "record batch of {} bytes after recompression exceeds max.message.bytes {}",
                                rebuilt.len(),
                                self.config.max_message_bytes
                            ),
                        ));
                    }
                    out.extend_from_slice(&rebuilt);
                }
            }
            let size = out.len() - start;
            let header = BatchHeader::parse(&out[start..])?;
            new_batches.push(ValidatedBatch {
                start,
                size,
                header,
                record_max_timestamp: b.record_max_timestamp,
            });
        }
        Ok((out, new_batches))
    }

    fn roll(&mut self, new_base: i64) -> Result<()> {
        let scfg = self.config.segment_config();
        if let Some(active) = self.segments.last_mut() {
            active.seal()?;
        }
        let seg = Segment::create(&self.dir, new_base, &scfg)?;
        self.segments.push(seg);
        self.dir_dirty = true;
        Ok(())
    }

    /// Rolls the active segment if it is older than `segment.ms` at
    /// `now_ms` (Kafka rolls on the next append; this lets retention act on
    /// an idle partition). Returns true if a new segment was started.
    pub fn maybe_roll(&mut self, now_ms: i64) -> Result<bool> {
        self.ensure_open()?;
        let segment_ms = self.config.segment_ms;
        let leo = self.log_end_offset();
        let active = self
            .segments
            .last_mut()
            .ok_or_else(|| LogError::storage("log has no segments"))?;
        if active.should_roll_by_time(now_ms, segment_ms)? {
            self.roll(leo)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Batch-aligned bytes starting with the batch containing `offset`, then
    /// whole batches of the same segment while the total stays within
    /// `max_bytes`. With `min_one`, a first batch larger than `max_bytes`
    /// is returned whole (KIP-74). `offset == log_end_offset` gives empty.
    /// Like Kafka, one read never spans two segments.
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<Vec<u8>> {
        self.read_with(offset, max_bytes, min_one, true)
    }

    /// [`Self::read`]; with `allow_zstd == false` (Fetch < v10) a zstd
    /// first batch is UNSUPPORTED_COMPRESSION_TYPE (76) and the result stops
    /// before any later zstd batch.
    pub fn read_with(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        allow_zstd: bool,
    ) -> Result<Vec<u8>> {
        let plan = self.read_plan_with(offset, max_bytes, min_one, allow_zstd, None)?;
        let mut data = vec![0u8; plan.len];
        let n = plan.read_into(&mut data)?;
        data.truncate(n);
        Ok(data)
    }

    /// Works out which file range [`Self::read`] returns, without reading
    /// record data. The plan can be executed after releasing any lock on
    /// the log: it only touches bytes that are already immutable.
    pub fn read_plan(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<ReadPlan> {
        self.read_plan_with(offset, max_bytes, min_one, true, None)
    }

    /// [`Self::read_plan`] with the zstd rule of [`Self::read_with`]. With
    /// `max_offset` (a consumer's high watermark) only whole batches below
    /// it are included; it is expected on a batch boundary, and a batch
    /// that straddles it is left out.
    pub fn read_plan_with(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        allow_zstd: bool,
        max_offset: Option<i64>,
    ) -> Result<ReadPlan> {
        self.plan_read(offset, max_bytes, min_one, allow_zstd, max_offset, false)
    }

    /// [`Self::read_plan_with`] whose range always ends on a batch boundary
    /// (`exact`), found from the offset index and batch lengths rather than
    /// by reading the range: for a range sent from the file as it is.
    pub fn read_plan_whole(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        allow_zstd: bool,
        max_offset: Option<i64>,
    ) -> Result<ReadPlan> {
        self.plan_read(offset, max_bytes, min_one, allow_zstd, max_offset, true)
    }

    fn plan_read(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        allow_zstd: bool,
        max_offset: Option<i64>,
        whole: bool,
    ) -> Result<ReadPlan> {
        self.ensure_open()?;
        let (start, end) = (self.log_start_offset(), self.log_end_offset());
        if offset < start || offset > end {
            return Err(LogError::offset_out_of_range(format!(
                "offset {offset} is out of range [{start}, {end}]"
            )));
        }
        let upper = max_offset.map_or(end, |m| m.min(end));
        if offset < upper {
            let first_segment = self.segment_index_for(offset);
            for (i, seg) in self.segments.iter().enumerate().skip(first_segment) {
                let Some((pos, first)) = seg.locate(offset)? else {
                    continue;
                };
                if !allow_zstd && first.compression() == compression::ZSTD {
                    return Err(LogError::new(
                        codes::UNSUPPORTED_COMPRESSION_TYPE,
                        format!(
                            "batch at offset {} is zstd-compressed, which this fetch version cannot carry",
                            first.base_offset
                        ),
                    ));
                }
                let first_size = first.total_size();
                // Bytes of this segment from `pos` that lie below `upper`.
                let below_upper = match self.segments.get(i + 1) {
                    Some(next) if next.base_offset() <= upper => seg.size() - pos,
                    _ if upper >= end => seg.size() - pos,
                    _ => match seg.locate(upper)? {
                        Some((upper_pos, _)) => upper_pos.saturating_sub(pos),
                        None => seg.size() - pos,
                    },
                };
                if below_upper == 0 {
                    break;
                }
                let (mut len, mut exact) = if first_size > max_bytes {
                    (if min_one { first_size } else { 0 }, true)
                } else {
                    let len = below_upper.min(max_bytes as u64) as usize;
                    if whole && (len as u64) < below_upper {
                        (seg.whole_batches_within(pos, len as u64)? as usize, true)
                    } else {
                        (len, len as u64 == below_upper)
                    }
                };
                if !allow_zstd && len > first_size {
                    // Stop before the first zstd batch in range.
                    let mut scan = seg.scanner(pos)?;
                    let mut cut = 0usize;
                    while let Some((at, h)) = scan.next_header()? {
                        let rel = (at - pos) as usize;
                        if rel >= len || h.compression() == compression::ZSTD {
                            break;
                        }
                        cut = (rel + h.total_size()).min(len);
                    }
                    if cut < len {
                        len = cut;
                        // Whole batches were cut on a batch boundary.
                        exact = whole && exact;
                    }
                }
                return Ok(ReadPlan {
                    file: Some(seg.file()?),
                    pos,
                    len,
                    exact,
                });
            }
        }
        Ok(ReadPlan {
            file: None,
            pos: 0,
            len: 0,
            exact: true,
        })
    }

    /// First (offset, timestamp) of a record with timestamp >= `timestamp`.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<(i64, i64)>> {
        self.ensure_open()?;
        let log_start = self.log_start_offset();
        for seg in &self.segments {
            if seg.max_timestamp() < timestamp {
                continue;
            }
            let (_, indexed_offset) = seg.time_index.lookup(timestamp);
            let from = indexed_offset.max(log_start);
            let (_, pos) = seg.offset_index.lookup(from);
            let mut scan = seg.scanner(u64::from(pos))?;
            while let Some((_, h, bytes)) = scan.next_batch(false)? {
                if h.last_offset() < from || h.max_timestamp < timestamp {
                    continue;
                }
                if let Some(found) =
                    timestamp_search::first_at_or_after(bytes, &h, timestamp, from)?
                {
                    return Ok(Some(found));
                }
            }
        }
        Ok(None)
    }

    /// (offset, timestamp) of the first record with the largest timestamp
    /// (ListOffsets MAX_TIMESTAMP, KIP-734); `None` for an empty log.
    pub fn max_timestamp(&self) -> Result<Option<(i64, i64)>> {
        self.ensure_open()?;
        let mut best: Option<&Segment> = None;
        for seg in &self.segments {
            if seg.offset_of_max_timestamp() < 0 {
                continue;
            }
            if best.is_none_or(|b| seg.max_timestamp() > b.max_timestamp()) {
                best = Some(seg);
            }
        }
        let Some(seg) = best else { return Ok(None) };
        let ts = seg.max_timestamp();
        let shallow = seg.offset_of_max_timestamp();
        if let Some((pos, h)) = seg.locate(shallow)? {
            let bytes = seg.read_at(pos, h.total_size())?;
            if let Some(found) = timestamp_search::first_with_timestamp(&bytes, &h, ts)? {
                return Ok(Some(found));
            }
        }
        Ok(Some((shallow, ts)))
    }

    /// OffsetForLeaderEpoch answer (epoch, end offset); see
    /// [`LeaderEpochCache::end_offset_for`].
    /// A new leader's epoch starts at the log end, recorded before anything
    /// of it is appended (Kafka's `maybeAssignEpochStartOffset`): asked where
    /// an older epoch ends, the leader can then say "where mine starts" even
    /// for an epoch it never saw. Returns true if the cache changed. The entry
    /// stays in memory if the checkpoint cannot be written (a full disk): the
    /// next checkpoint write carries it, and a lost one is rebuilt on open.
    pub fn assign_leader_epoch(&mut self, epoch: i32) -> Result<bool> {
        self.ensure_open()?;
        if self
            .epochs
            .latest_epoch()
            .is_some_and(|latest| latest >= epoch)
        {
            return Ok(false);
        }
        let leo = self.log_end_offset();
        if !self.epochs.assign(epoch, leo) {
            return Ok(false);
        }
        if leo == self.log_start_offset {
            // An empty log's entry is written with its first append, not
            // here, nor by a flush or close: a new topic's thousands of
            // partitions each wrote a checkpoint here, most of what leading
            // them cost. An entry at the log end is dropped on open anyway;
            // this replica assigns the epoch again when it next leads.
            self.epochs_unwritten = true;
        } else {
            self.write_epochs()?;
        }
        Ok(true)
    }

    pub fn end_offset_for_epoch(&self, leader_epoch: i32) -> Result<(i32, i64)> {
        self.ensure_open()?;
        Ok(self
            .epochs
            .end_offset_for(leader_epoch, self.log_end_offset()))
    }

    /// fsyncs if `flush.ms` has passed since the last flush and something
    /// was appended since. Returns true if it flushed.
    pub fn flush_if_due(&mut self, now_ms: i64) -> Result<bool> {
        self.ensure_open()?;
        if !self.flush_policy.time_due(now_ms, self.config.flush_ms) {
            return Ok(false);
        }
        self.flush_inner()?;
        Ok(true)
    }

    /// Messages appended since the last fsync.
    pub fn unflushed_messages(&self) -> i64 {
        self.flush_policy.unflushed_messages()
    }

    /// Applies a new configuration live. Segment sizing applies to segments
    /// created from now on.
    pub fn update_config(&mut self, config: LogConfig) -> Result<()> {
        self.ensure_open()?;
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// Number of this log's files currently holding a descriptor.
    pub fn open_file_count(&self) -> usize {
        file_cache::open_count_in(&self.dir)
    }

    fn segment_facts(&self) -> Vec<SegmentFacts> {
        self.segments
            .iter()
            .map(|s| SegmentFacts {
                base_offset: s.base_offset(),
                next_offset: s.next_offset(),
                size: s.size(),
                largest_timestamp: if s.max_timestamp() >= 0 {
                    s.max_timestamp()
                } else {
                    modified_ms(s.log_path())
                },
            })
            .collect()
    }

    /// Deletes the `count` oldest segments (rolling first if that is all of
    /// them), advances the log start offset to the next segment's base and
    /// persists it. Returns (segments deleted, bytes freed).
    fn delete_oldest(&mut self, count: usize) -> Result<(usize, u64)> {
        if count == 0 {
            return Ok((0, 0));
        }
        if count >= self.segments.len() {
            let leo = self.log_end_offset();
            self.roll(leo)?;
        }
        let count = count.min(self.segments.len() - 1);
        let new_start = self.segments[count].base_offset();
        if new_start > self.log_start_offset {
            self.log_start_offset = new_start;
            offset_checkpoint::write(
                &self.dir,
                offset_checkpoint::LOG_START_OFFSET,
                self.log_start_offset,
            )?;
        }
        let mut freed = 0u64;
        let removed: Vec<Segment> = self.segments.drain(..count).collect();
        for seg in removed {
            freed += seg.size();
            seg.delete_files()?;
        }
        self.first_dirty_segment = self.first_dirty_segment.map(|d| d.saturating_sub(count));
        self.dir_dirty = true;
        if self.epochs.truncate_from_start(self.log_start_offset) {
            self.persist_epochs()?;
        }
        Ok((count, freed))
    }

    /// Retention (cleanup.policy containing `delete`; the log start rule
    /// always applies): rolls the active segment first if `segment.ms` says
    /// so, then deletes whole segments from the oldest while they are older
    /// than `retention.ms`, or while the log stays at least
    /// `retention.bytes` big without them, or while they lie entirely below
    /// the log start offset. Returns (segments deleted, bytes freed).
    pub fn enforce_retention(&mut self, now_ms: i64) -> Result<(usize, u64)> {
        self.ensure_open()?;
        self.maybe_roll(now_ms)?;
        let rules = RetentionRules {
            delete_policy: self.config.cleanup_policy.delete,
            retention_ms: self.config.retention_ms,
            retention_bytes: self.config.retention_bytes,
            log_start_offset: self.log_start_offset,
            log_end_offset: self.log_end_offset(),
            now_ms,
        };
        let count = retention::deletable_prefix(&self.segment_facts(), &rules);
        self.delete_oldest(count)
    }

    /// DeleteRecords: moves the log start offset up to `offset` (-1 = the
    /// high watermark, i.e. the log end) and deletes the segments entirely
    /// below it. An offset beyond the log end is OFFSET_OUT_OF_RANGE (1); an
    /// offset below the current start changes nothing. Returns the new low
    /// watermark.
    pub fn delete_records(&mut self, offset: i64) -> Result<i64> {
        self.ensure_open()?;
        let leo = self.log_end_offset();
        let target = if offset == -1 { leo } else { offset };
        if target < 0 || target > leo {
            return Err(LogError::offset_out_of_range(format!(
                "cannot delete records before offset {offset}: log end offset is {leo}"
            )));
        }
        if target > self.log_start_offset {
            self.log_start_offset = target;
            offset_checkpoint::write(
                &self.dir,
                offset_checkpoint::LOG_START_OFFSET,
                self.log_start_offset,
            )?;
            let rules = RetentionRules {
                delete_policy: false,
                retention_ms: -1,
                retention_bytes: -1,
                log_start_offset: self.log_start_offset,
                log_end_offset: leo,
                now_ms: 0,
            };
            let count = retention::deletable_prefix(&self.segment_facts(), &rules);
            self.delete_oldest(count)?;
        }
        Ok(self.log_start_offset)
    }

    /// First step of a cleaning pass (under the lock): decides whether the
    /// log needs compaction and captures what the pass reads. `None` when
    /// the policy has no `compact` or nothing is due.
    pub fn prepare_clean(&mut self, now_ms: i64) -> Result<Option<CleanPlan>> {
        self.ensure_open()?;
        if !self.config.cleanup_policy.compact || self.segments.len() < 2 {
            return Ok(None);
        }
        let closed_count = self.segments.len() - 1;
        let active_base = self.segments[closed_count].base_offset();
        let mut summaries = Vec::with_capacity(closed_count);
        for i in 0..closed_count {
            let upper = self.segments[i + 1].base_offset();
            let seg = &mut self.segments[i];
            if upper <= self.log_start_offset {
                continue;
            }
            let first_ts = seg.first_batch_timestamp()?;
            summaries.push(SegmentSummary {
                base_offset: seg.base_offset(),
                next_offset: seg.next_offset(),
                upper,
                size: seg.size(),
                largest_timestamp: if seg.max_timestamp() >= 0 {
                    seg.max_timestamp()
                } else {
                    modified_ms(seg.log_path())
                },
                first_batch_timestamp: first_ts,
            });
        }
        let first_dirty = self
            .cleaner_checkpoint
            .filter(|c| *c >= self.log_start_offset && *c <= active_base)
            .unwrap_or(self.log_start_offset);
        // An open transaction may still abort: nothing from its first offset on is cleaned.
        let stable = self
            .producers
            .first_open_offset()
            .map_or(active_base, |o| o.min(active_base));
        let c = cleaner::cleanability(&summaries, stable, first_dirty, &self.config, now_ms);
        let snapshot = |s: &SegmentSummary, seg: &Segment| -> Result<CleanerSegment> {
            Ok(CleanerSegment {
                base_offset: s.base_offset,
                upper: s.upper,
                size: s.size,
                index_entries: seg.offset_index_entries(),
                file: seg.file()?,
            })
        };
        let mut chosen = Vec::new();
        for s in summaries.iter().filter(|s| s.upper <= c.first_uncleanable) {
            let idx = self.segment_index_for(s.base_offset);
            chosen.push(snapshot(s, &self.segments[idx])?);
        }
        if chosen.is_empty() {
            return Ok(None);
        }
        let due = if c.should_clean(&self.config) {
            true
        } else {
            if self.tombstone_expiry.is_none() {
                let mut best: Option<i64> = None;
                for seg in &chosen {
                    if let Some(t) = cleaner::earliest_horizon(seg)? {
                        best = Some(best.map_or(t, |b| b.min(t)));
                    }
                }
                self.tombstone_expiry = Some(best);
            }
            self.tombstone_expiry.flatten().is_some_and(|t| t <= now_ms)
        };
        if !due {
            return Ok(None);
        }
        Ok(Some(CleanPlan {
            dir: self.dir.clone(),
            config: self.config,
            now_ms,
            segments: chosen,
            first_dirty: c.first_dirty,
            end: c.first_uncleanable.max(c.first_dirty),
            producer_last_offsets: self.producers.last_batch_offsets(),
            aborted: self.aborted_before(c.first_uncleanable.max(c.first_dirty)),
            producers_without_batches: self.producers.producers_without_batches(),
        }))
    }

    /// Last step of a cleaning pass (under the lock): swaps the cleaned
    /// segments in (crash-safely) if the segments they replace are still
    /// in place, else discards them. Returns the pass's counters, or
    /// `None` if it was abandoned.
    pub fn finish_clean(&mut self, output: CleanOutput) -> Result<Option<CleanStats>> {
        if self.closed {
            output.discard();
            return Err(LogError::storage(format!(
                "log {} is closed",
                self.dir.display()
            )));
        }
        // Every replaced segment must still be a closed segment, unchanged.
        let still_there = output.groups.iter().all(|g| {
            g.replaced.iter().all(|&(base, size)| {
                self.segments[..self.segments.len().saturating_sub(1)]
                    .iter()
                    .any(|s| s.base_offset() == base && s.size() == size)
            })
        });
        if !still_there {
            output.discard();
            return Ok(None);
        }
        let stats = output.stats;
        let checkpoint = output.new_checkpoint;
        let expiry = output.next_tombstone_expiry;
        for group in output.groups {
            let first = group.replaced.first().map(|r| r.0);
            let Some(first) = first else {
                let _ = group.segment.delete_files();
                continue;
            };
            let pos = self
                .segments
                .iter()
                .position(|s| s.base_offset() == first)
                .ok_or_else(|| LogError::storage("cleaned segment vanished"))?;
            let n = group.replaced.len();
            let old: Vec<Segment> = self.segments.drain(pos..pos + n).collect();
            // The aborts the replaced segments indexed stay with the segment
            // that replaces them, but for those whose marker the pass removed.
            let aborts: Vec<AbortedTxn> = old
                .iter()
                .flat_map(|s| s.txn_index.entries().iter().copied())
                .filter(|a| !group.dropped_aborts.contains(&a.last_offset))
                .collect();
            let mut group = group;
            if !aborts.is_empty() {
                group.segment.txn_index.replace(aborts)?;
            }
            let installed = segment_swap::install(&self.dir, group, old)?;
            self.segments.insert(pos, installed);
            if let Some(d) = self.first_dirty_segment
                && d >= pos
            {
                self.first_dirty_segment = Some(pos.max(d.saturating_sub(n - 1)));
            }
        }
        self.cleaner_checkpoint = Some(checkpoint);
        offset_checkpoint::write(&self.dir, offset_checkpoint::CLEANER_OFFSET, checkpoint)?;
        self.tombstone_expiry = Some(expiry);
        Ok(Some(stats))
    }

    /// A whole cleaning pass in one call (prepare, run, finish). The
    /// Python binding runs the middle step without the log's lock.
    pub fn clean(&mut self, now_ms: i64) -> Result<Option<CleanStats>> {
        self.clean_within(now_ms, usize::MAX)
    }

    /// [`Self::clean`] with an offset map of at most `dedupe_bytes`: a dirty
    /// range with more keys than fit is cleaned over several passes.
    pub fn clean_within(&mut self, now_ms: i64, dedupe_bytes: usize) -> Result<Option<CleanStats>> {
        let Some(plan) = self.prepare_clean(now_ms)? else {
            return Ok(None);
        };
        let output = cleaner::run(&plan, dedupe_bytes)?;
        self.finish_clean(output)
    }

    /// Cleaner checkpoint (first dirty offset), if any.
    pub fn cleaner_checkpoint(&self) -> Option<i64> {
        self.cleaner_checkpoint
    }

    /// fsyncs every segment written since the last flush, a leader-epoch
    /// checkpoint written since, and the directory after segments were
    /// created or deleted (always on a new log's first flush, as Kafka
    /// defers a new log's directory fsync to its first flush).
    pub fn flush(&mut self) -> Result<()> {
        self.ensure_open()?;
        self.flush_inner()
    }

    fn flush_inner(&mut self) -> Result<()> {
        let leo = self.log_end_offset();
        self.flush_policy.flushed(now_ms());
        if let Some(from) = self.first_dirty_segment {
            for seg in &self.segments[from.min(self.segments.len())..] {
                seg.flush()?;
            }
            // Only now: a failed fsync leaves the segments dirty for the next flush.
            self.first_dirty_segment = None;
        }
        self.sync_metadata()?;
        self.recovery_point = self.recovery_point.max(leo);
        Ok(())
    }

    /// Kafka flushes a rolled segment soon after the roll: fsyncs the
    /// segments before the active one written since the last flush, and
    /// moves the recovery point to the active segment's base offset.
    /// Returns true if there was anything to flush.
    pub fn flush_rolled(&mut self) -> Result<bool> {
        self.ensure_open()?;
        let active = self.segments.len().saturating_sub(1);
        let Some(from) = self.first_dirty_segment.filter(|&d| d < active) else {
            return Ok(false);
        };
        for seg in &self.segments[from..active] {
            seg.flush()?;
        }
        self.first_dirty_segment = Some(active);
        self.sync_metadata()?;
        let active_base = self.active_segment_base_offset();
        self.recovery_point = self.recovery_point.max(active_base);
        Ok(true)
    }

    /// Files of the rolled segments [`Self::flush_rolled`] would fsync, so a
    /// caller can fsync their data first without holding the log (the
    /// heavy part; `flush_rolled` then finds little left to write).
    pub fn rolled_unflushed_files(&self) -> Result<Vec<Arc<File>>> {
        self.ensure_open()?;
        let active = self.segments.len().saturating_sub(1);
        match self.first_dirty_segment.filter(|&d| d < active) {
            Some(from) => self.segments[from..active]
                .iter()
                .map(|s| s.file())
                .collect(),
            None => Ok(Vec::new()),
        }
    }

    /// Offset below which everything is durable (see the field).
    pub fn recovery_point(&self) -> i64 {
        self.recovery_point
    }

    /// fsyncs what makes flushed segments findable after a crash: the
    /// leader-epoch checkpoint and the directory entries.
    fn sync_metadata(&mut self) -> Result<()> {
        // An empty log's unwritten entry stays unwritten (see close).
        if self.epochs_unsynced {
            self.epochs.sync()?;
            self.epochs_unsynced = false;
        }
        // The data is durable only once the directory entries naming its
        // files are: the log's own directory after it gained segments, and
        // the parent's entry for a directory this log created.
        if self.dir_dirty {
            segment_swap::sync_dir(&self.dir)?;
            self.dir_dirty = false;
        }
        if self.parent_dirty {
            if let Some(parent) = self.dir.parent() {
                segment_swap::sync_dir(parent)?;
            }
            self.parent_dirty = false;
        }
        Ok(())
    }

    /// Writes the leader-epoch checkpoint without an fsync; the next flush
    /// (or close) makes it durable.
    fn write_epochs(&mut self) -> Result<()> {
        self.epochs.write_unsynced()?;
        self.epochs_unsynced = true;
        self.epochs_on_disk = true;
        self.epochs_unwritten = false;
        Ok(())
    }

    /// Writes and fsyncs the leader-epoch checkpoint.
    fn persist_epochs(&mut self) -> Result<()> {
        self.epochs.persist()?;
        self.epochs_on_disk = true;
        self.epochs_unsynced = false;
        self.epochs_unwritten = false;
        Ok(())
    }

    /// Flushes, writes the final time index entry, trims the indexes, writes
    /// the producer-state snapshot and epoch checkpoint. Idempotent.
    pub fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        if let Some(active) = self.segments.last_mut() {
            active.seal()?;
        }
        for seg in &self.segments {
            seg.trim_indexes()?;
        }
        // The checkpoint is made durable before the producer snapshot: the
        // next open re-derives epochs only from the snapshot's offset on, so
        // a durable snapshot must never sit beside an older checkpoint. A
        // log that never had data needs none (a missing file reads as empty).
        // An empty log's entry not yet written is not written now either: an
        // entry at the log end is dropped on open, so it would change nothing
        // but cost a broker stopping with thousands of partitions nobody wrote
        // to a checkpoint and an fsync each. What is on disk (if anything) is
        // from before, all of it below the log end.
        if !self.epochs_unwritten && !self.epochs_on_disk {
            if !self.epochs.entries().is_empty() || self.log_end_offset() > self.log_start_offset {
                self.persist_epochs()?;
            }
        } else if self.epochs_unsynced {
            self.epochs.sync()?;
        }
        self.epochs_unsynced = false;
        self.first_dirty_segment = Some(self.segments.len().saturating_sub(1));
        self.flush_inner()?;
        let leo = self.log_end_offset();
        self.producers.write_snapshot(&self.dir, leo)?;
        if let Ok(listing) = fs::read_dir(&self.dir) {
            for entry in listing.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(off) = parse_stem(&name, "snapshot")
                    && off != leo
                {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        self.closed = true;
        Ok(())
    }
}

impl Drop for PartitionLog {
    fn drop(&mut self) {
        // Best effort: data is already in the page cache; this only writes
        // the snapshot and trims indexes so the next open is cheap.
        let _ = self.close();
    }
}

/// Creates the log directory if it is missing; true if this call created
/// it. No fsync here: see [`PartitionLog::flush`] for when it becomes
/// durable.
fn create_dir(dir: &Path) -> Result<bool> {
    match fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A missing log dir (or deeper parents): create the whole path.
            fs::create_dir_all(dir)
                .map_err(|e| LogError::io(format!("creating {}", dir.display()), e))?;
            Ok(true)
        }
        Err(e) => Err(LogError::io(format!("creating {}", dir.display()), e)),
    }
}

/// Modification time of a file in ms (0 if unknown).
fn modified_ms(path: &Path) -> i64 {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// A file range to read for a fetch (see [`PartitionLog::read_plan`]).
#[derive(Debug, Clone)]
pub struct ReadPlan {
    file: Option<Arc<File>>,
    pos: u64,
    /// Bytes to read (an upper bound of the result when not `exact`).
    pub len: usize,
    /// True when `len` bytes are exactly whole batches (no trimming needed).
    pub exact: bool,
}

impl ReadPlan {
    /// The file range itself, `None` for an empty read: (file, position, length).
    pub fn file_range(&self) -> Option<(Arc<File>, u64, usize)> {
        let file = self.file.as_ref()?;
        (self.len > 0).then(|| (Arc::clone(file), self.pos, self.len))
    }

    /// Reads the range into `buf` (at least `len` bytes long) and returns
    /// how many leading bytes form whole batches.
    pub fn read_into(&self, buf: &mut [u8]) -> Result<usize> {
        let Some(file) = &self.file else { return Ok(0) };
        let buf = buf
            .get_mut(..self.len)
            .ok_or_else(|| LogError::storage("read buffer too small"))?;
        file.read_exact_at(buf, self.pos)
            .map_err(|e| LogError::io(format!("reading log at position {}", self.pos), e))?;
        Ok(if self.exact {
            self.len
        } else {
            aligned_len(buf)
        })
    }
}

/// Length of the longest prefix of `data` made of whole batches.
fn aligned_len(data: &[u8]) -> usize {
    let mut p = 0usize;
    while let Ok((_, len)) = BatchHeader::parse_overhead(&data[p..]) {
        if len < 0 {
            break;
        }
        let size = LOG_OVERHEAD + len as usize;
        if data.len() - p < size {
            break;
        }
        p += size;
    }
    p
}
