//! Log compaction (cleanup.policy=compact): deciding whether a log is worth
//! cleaning (dirty ratio, max compaction lag, expired tombstones), building
//! the key -> latest offset map over the dirty range, and rewriting closed
//! segments into `.cleaned` segments that keep only the newest record per
//! key. Rules (Kafka's):
//! - offsets are preserved (gaps appear); a rewritten batch keeps its base
//!   offset and last offset delta, so producer sequence ranges survive;
//! - a producer's last batch is kept even when all its records go (empty);
//! - keyless records are dropped;
//! - a tombstone (null value) is kept while it is the newest record of its
//!   key until its batch's delete horizon passes: the first cleaning that
//!   sees a tombstone stamps the batch with `now + delete.retention.ms`
//!   (attribute bit 6, stored in the base timestamp, record timestamp deltas
//!   re-based) and later cleanings drop it once that time is reached;
//! - transaction markers go the same way once nothing of their transaction
//!   is left (Kafka's rules): an ABORT marker is kept by the pass that
//!   removes its transaction's records, a COMMIT marker while any batch of
//!   its transaction remains; then it is stamped with a delete horizon and
//!   dropped by a later pass after it (its abort leaves the `.txnindex`).
//!   Markers of a producer whose state holds no batch (its last act was a
//!   marker, as after a transaction version 2 epoch bump) are kept, so its
//!   epoch survives a rebuild from the log.
//!
//! Everything here works on immutable inputs (closed segments opened via
//! shared handles) so it runs without the partition lock; installing the
//! result is `segment_swap`'s job.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use crate::batch_scanner::BatchScanner;
use crate::compression;
use crate::error::Result;
use crate::log_config::LogConfig;
use crate::recompress::{build_batch, raw_records};
use crate::record_batch::{BatchHeader, HEADER_SIZE};
use crate::record_view::{RecordView, encode_record, parse_records};
use crate::segment::Segment;
use crate::txn_marker;
use crate::validator::ValidatedBatch;

/// Attribute bit 6: the batch's base timestamp is its delete horizon.
pub const DELETE_HORIZON_BIT: i16 = 0x40;

const ATTRIBUTES: usize = 21;
const BASE_TIMESTAMP: usize = 27;
const MAX_TIMESTAMP: usize = 35;
const RECORDS_COUNT: usize = 57;

/// What the cleanability decision needs to know about a closed segment.
#[derive(Debug, Clone, Copy)]
pub struct SegmentSummary {
    /// First offset.
    pub base_offset: i64,
    /// Offset after its last batch.
    pub next_offset: i64,
    /// Base offset of the following segment (upper bound of its range).
    pub upper: i64,
    /// `.log` size.
    pub size: u64,
    /// Largest timestamp.
    pub largest_timestamp: i64,
    /// First batch's max timestamp, if any.
    pub first_batch_timestamp: Option<i64>,
}

/// How dirty a log is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cleanability {
    /// First offset not yet cleaned.
    pub first_dirty: i64,
    /// First offset the cleaner may not touch (active segment, or records
    /// younger than `min.compaction.lag.ms`).
    pub first_uncleanable: i64,
    /// Bytes of closed segments below `first_dirty`.
    pub clean_bytes: u64,
    /// Bytes of cleanable segments at or after `first_dirty`.
    pub dirty_bytes: u64,
    /// `dirty / (clean + dirty)`.
    pub ratio: f64,
    /// A dirty record is older than `max.compaction.lag.ms`.
    pub max_lag_due: bool,
}

impl Cleanability {
    /// Whether the dirty range alone justifies a cleaning.
    pub fn should_clean(&self, cfg: &LogConfig) -> bool {
        self.dirty_bytes > 0 && (self.ratio >= cfg.min_cleanable_dirty_ratio || self.max_lag_due)
    }
}

/// Computes the dirty ratio of the closed segments `closed` (oldest first).
pub fn cleanability(
    closed: &[SegmentSummary],
    active_base: i64,
    first_dirty: i64,
    cfg: &LogConfig,
    now_ms: i64,
) -> Cleanability {
    let mut first_uncleanable = active_base;
    if cfg.min_compaction_lag_ms > 0 {
        let horizon = now_ms.saturating_sub(cfg.min_compaction_lag_ms);
        if let Some(s) = closed
            .iter()
            .find(|s| s.upper > first_dirty && s.largest_timestamp > horizon)
        {
            first_uncleanable = first_uncleanable.min(s.base_offset.max(first_dirty));
        }
    }
    let mut clean_bytes = 0u64;
    let mut dirty_bytes = 0u64;
    let mut earliest_dirty_ts: Option<i64> = None;
    for s in closed.iter().filter(|s| s.upper <= first_uncleanable) {
        if s.upper <= first_dirty {
            clean_bytes += s.size;
        } else if s.size > 0 {
            dirty_bytes += s.size;
            if let Some(t) = s.first_batch_timestamp.filter(|t| *t >= 0) {
                earliest_dirty_ts = Some(earliest_dirty_ts.map_or(t, |e| e.min(t)));
            }
        }
    }
    let total = clean_bytes + dirty_bytes;
    let ratio = if total == 0 {
        0.0
    } else {
        dirty_bytes as f64 / total as f64
    };
    let max_lag_due =
        earliest_dirty_ts.is_some_and(|t| now_ms.saturating_sub(t) > cfg.max_compaction_lag_ms);
    Cleanability {
        first_dirty,
        first_uncleanable,
        clean_bytes,
        dirty_bytes,
        ratio,
        max_lag_due,
    }
}

/// One closed segment the cleaner reads.
#[derive(Debug, Clone)]
pub struct CleanerSegment {
    /// First offset (file name).
    pub base_offset: i64,
    /// Base offset of the following segment.
    pub upper: i64,
    /// Bytes to read (the segment is immutable).
    pub size: u64,
    /// Offset index entries (for grouping).
    pub index_entries: usize,
    /// Shared handle: stays readable even if the file is replaced.
    pub file: Arc<File>,
}

/// Everything a cleaning pass needs, captured under the partition lock.
#[derive(Debug, Clone)]
pub struct CleanPlan {
    /// Partition directory.
    pub dir: PathBuf,
    /// Configuration in force.
    pub config: LogConfig,
    /// Time of the pass.
    pub now_ms: i64,
    /// Closed segments to rewrite, oldest first, contiguous.
    pub segments: Vec<CleanerSegment>,
    /// Start of the dirty range the offset map covers.
    pub first_dirty: i64,
    /// End (exclusive) of the dirty range.
    pub end: i64,
    /// Last offsets of each producer's last batch.
    pub producer_last_offsets: HashSet<i64>,
    /// Aborted transactions that may hold data in the segments, by
    /// producer: (first offset, marker offset). Their records are removed
    /// and never stand for their key.
    pub aborted: HashMap<i64, Vec<(i64, i64)>>,
    /// Producers whose state holds no batch: their markers are kept.
    pub producers_without_batches: HashSet<i64>,
}

impl CleanPlan {
    /// True for a transactional data batch of an aborted transaction.
    fn is_aborted(&self, h: &BatchHeader) -> bool {
        h.is_transactional()
            && !h.is_control()
            && self.aborted.get(&h.producer_id).is_some_and(|ranges| {
                ranges
                    .iter()
                    .any(|&(first, marker)| first <= h.base_offset && h.base_offset < marker)
            })
    }
}

/// A `.cleaned` segment and what it replaces.
#[derive(Debug)]
pub struct CleanedGroup {
    /// The new segment (files named `*.cleaned`, sealed and fsynced).
    pub segment: Segment,
    /// (base offset, size) of the segments it replaces.
    pub replaced: Vec<(i64, u64)>,
    /// Upper bound of the replaced range (base of the segment after it).
    pub end_offset: i64,
    /// Offsets of the ABORT markers this pass removed (their `.txnindex`
    /// entries go with them).
    pub dropped_aborts: HashSet<i64>,
}

/// Counters of a cleaning pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanStats {
    /// Segments rewritten.
    pub segments: usize,
    /// Bytes before.
    pub bytes_before: u64,
    /// Bytes after.
    pub bytes_after: u64,
    /// Records dropped.
    pub records_removed: u64,
}

/// Result of [`run`].
#[derive(Debug)]
pub struct CleanOutput {
    /// New segments.
    pub groups: Vec<CleanedGroup>,
    /// New cleaner checkpoint (end of the dirty range).
    pub new_checkpoint: i64,
    /// Counters.
    pub stats: CleanStats,
    /// Earliest delete horizon of a tombstone still in the cleaned range.
    pub next_tombstone_expiry: Option<i64>,
}

impl CleanOutput {
    /// Deletes the `.cleaned` files (pass abandoned).
    pub fn discard(self) {
        for g in self.groups {
            let _ = g.segment.delete_files();
        }
    }
}

/// Groups consecutive segments so each group fits one segment: total size
/// within `segment.bytes`, index entries within `segment.index.bytes`, and
/// offsets representable relative to the group's base.
fn group_segments(segs: &[CleanerSegment], cfg: &LogConfig) -> Vec<std::ops::Range<usize>> {
    let max_entries = cfg.segment_index_bytes / crate::offset_index::ENTRY_SIZE;
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let start = i;
        let mut size = segs[i].size;
        let mut entries = segs[i].index_entries;
        i += 1;
        while i < segs.len()
            && size + segs[i].size <= cfg.segment_bytes
            && entries + segs[i].index_entries <= max_entries
            && segs[i].upper - 1 - segs[start].base_offset <= i64::from(i32::MAX)
        {
            size += segs[i].size;
            entries += segs[i].index_entries;
            i += 1;
        }
        groups.push(start..i);
    }
    groups
}

/// Calls `f` with each stored batch of `seg`.
fn for_each_batch(
    seg: &CleanerSegment,
    mut f: impl FnMut(&BatchHeader, &[u8]) -> Result<()>,
) -> Result<()> {
    let mut scan = BatchScanner::new(Arc::clone(&seg.file), 0, seg.size);
    while let Some((_, h, bytes)) = scan.next_batch(false)? {
        f(&h, bytes)?;
    }
    Ok(())
}

/// What one offset-map entry costs besides its key's bytes: the key's
/// allocation header, the offset and the table's own share.
pub const MAP_ENTRY_OVERHEAD: usize = 64;

/// Builds the key -> latest offset map of `[first_dirty, end)` within
/// `budget` bytes. Where it fills up, the range ends (as Kafka's cleaner
/// stops at a full offset map); that end is returned with the map. The first
/// key always goes in, so every pass moves the checkpoint on.
fn build_offset_map(plan: &CleanPlan, budget: usize) -> Result<(HashMap<Vec<u8>, i64>, i64)> {
    let mut map: HashMap<Vec<u8>, i64> = HashMap::new();
    let mut used = 0usize;
    let mut full_at: Option<i64> = None;
    for seg in plan.segments.iter().filter(|s| s.upper > plan.first_dirty) {
        for_each_batch(seg, |h, bytes| {
            if full_at.is_some()
                || h.is_control()
                || h.last_offset() < plan.first_dirty
                || plan.is_aborted(h)
            {
                return Ok(());
            }
            let raw = raw_records(bytes, h)?;
            for r in parse_records(&raw)? {
                let offset = h.base_offset + i64::from(r.offset_delta);
                let Some(k) = r.key else { continue };
                if offset < plan.first_dirty || offset >= plan.end {
                    continue;
                }
                if let Some(latest) = map.get_mut(k) {
                    *latest = offset;
                    continue;
                }
                let cost = k.len().saturating_add(MAP_ENTRY_OVERHEAD);
                if !map.is_empty() && used.saturating_add(cost) > budget {
                    full_at = Some(offset);
                    return Ok(());
                }
                used += cost;
                map.insert(k.to_vec(), offset);
            }
            Ok(())
        })?;
        if full_at.is_some() {
            break;
        }
    }
    Ok((map, full_at.unwrap_or(plan.end)))
}

/// What the rewriting walk has seen of each producer's transaction since
/// its last marker.
#[derive(Default)]
struct TxnWalk {
    /// Producers whose aborted records this pass removed.
    aborted_data: HashSet<i64>,
    /// Producers with batches of a transaction that is not aborted.
    committed_data: HashSet<i64>,
}

enum Outcome {
    /// `expiring`: the batch carries a delete horizon a later pass acts on.
    Keep {
        expiring: bool,
    },
    Drop,
    Rewrite {
        bytes: Vec<u8>,
        expiring: bool,
    },
}

fn put_i64(b: &mut [u8], at: usize, v: i64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// Rewrites a batch with only `kept` records, optionally stamping a delete
/// horizon (new base timestamp).
fn rebuild(
    bytes: &[u8],
    h: &BatchHeader,
    kept: &[RecordView<'_>],
    set_horizon: Option<i64>,
) -> Result<Vec<u8>> {
    let new_base_ts = set_horizon.unwrap_or(h.base_timestamp);
    let mut raw = Vec::new();
    let mut max_ts: Option<i64> = None;
    for r in kept {
        let ts = h.base_timestamp.wrapping_add(r.timestamp_delta);
        max_ts = Some(max_ts.map_or(ts, |m| m.max(ts)));
        if set_horizon.is_some() {
            encode_record(&mut raw, r, ts.wrapping_sub(new_base_ts));
        } else {
            raw.extend_from_slice(r.raw);
        }
    }
    let max_ts = if h.is_log_append_time() {
        h.max_timestamp
    } else {
        max_ts.unwrap_or(h.max_timestamp)
    };
    let mut head = bytes[..HEADER_SIZE].to_vec();
    let mut attrs = h.attributes;
    if set_horizon.is_some() {
        attrs |= DELETE_HORIZON_BIT;
    }
    head[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attrs.to_be_bytes());
    put_i64(
        &mut head,
        BASE_TIMESTAMP,
        if kept.is_empty() { max_ts } else { new_base_ts },
    );
    put_i64(&mut head, MAX_TIMESTAMP, max_ts);
    let count = i32::try_from(kept.len()).unwrap_or(i32::MAX);
    head[RECORDS_COUNT..RECORDS_COUNT + 4].copy_from_slice(&count.to_be_bytes());
    let codec = if kept.is_empty() {
        compression::NONE
    } else {
        h.compression()
    };
    let payload = compression::compress(codec, None, &raw)?;
    build_batch(&head, codec, &payload)
}

fn filter_batch(
    bytes: &[u8],
    h: &BatchHeader,
    map: &HashMap<Vec<u8>, i64>,
    plan: &CleanPlan,
    removed: &mut u64,
) -> Result<Outcome> {
    let raw = raw_records(bytes, h)?;
    let records = parse_records(&raw)?;
    let horizon = (h.attributes & DELETE_HORIZON_BIT != 0).then_some(h.base_timestamp);
    let aborted = plan.is_aborted(h);
    let mut kept = Vec::with_capacity(records.len());
    for r in records.iter().filter(|_| !aborted) {
        let offset = h.base_offset + i64::from(r.offset_delta);
        let Some(key) = r.key else { continue };
        let latest = map.get(key).is_none_or(|&o| offset >= o);
        let value_ok = r.has_value || horizon.is_none_or(|hz| plan.now_ms < hz);
        if latest && value_ok {
            kept.push(*r);
        }
    }
    let tombstones = kept.iter().any(|r| !r.has_value);
    *removed += (records.len() - kept.len()) as u64;
    let set_horizon = (tombstones && horizon.is_none())
        .then(|| plan.now_ms.saturating_add(plan.config.delete_retention_ms));
    if kept.len() == records.len() && set_horizon.is_none() {
        return Ok(Outcome::Keep {
            expiring: tombstones,
        });
    }
    if kept.is_empty() && !plan.producer_last_offsets.contains(&h.last_offset()) {
        return Ok(Outcome::Drop);
    }
    Ok(Outcome::Rewrite {
        bytes: rebuild(bytes, h, &kept, set_horizon)?,
        expiring: tombstones,
    })
}

/// A control batch: kept while its transaction has records in the log
/// (see the module doc), else stamped with a delete horizon, then dropped
/// once it has passed. `dropped_abort` is set for a removed ABORT marker.
fn filter_marker(
    bytes: &[u8],
    h: &BatchHeader,
    plan: &CleanPlan,
    walk: &mut TxnWalk,
    dropped_abort: &mut bool,
) -> Result<Outcome> {
    let Some(marker) = txn_marker::parse(h, bytes)? else {
        return Ok(Outcome::Keep { expiring: false });
    };
    let had_aborted = walk.aborted_data.remove(&h.producer_id);
    let had_committed = walk.committed_data.remove(&h.producer_id);
    let needed = if marker.commit {
        had_committed
    } else {
        had_aborted
    };
    if needed
        || plan.producers_without_batches.contains(&h.producer_id)
        || plan.producer_last_offsets.contains(&h.last_offset())
    {
        return Ok(Outcome::Keep { expiring: false });
    }
    if h.attributes & DELETE_HORIZON_BIT == 0 {
        let raw = raw_records(bytes, h)?;
        let records = parse_records(&raw)?;
        let horizon = plan.now_ms.saturating_add(plan.config.delete_retention_ms);
        return Ok(Outcome::Rewrite {
            bytes: rebuild(bytes, h, &records, Some(horizon))?,
            expiring: true,
        });
    }
    if plan.now_ms < h.base_timestamp {
        return Ok(Outcome::Keep { expiring: true });
    }
    *dropped_abort = !marker.commit;
    Ok(Outcome::Drop)
}

fn append_batch(seg: &mut Segment, bytes: &[u8]) -> Result<()> {
    let header = BatchHeader::parse(bytes)?;
    let vb = ValidatedBatch {
        start: 0,
        size: bytes.len(),
        header,
        record_max_timestamp: None,
    };
    seg.append(bytes, &[vb])
}

/// Runs a cleaning pass: builds the offset map, writes one `.cleaned`
/// segment per group of input segments (sealed and fsynced). Touches no
/// live file, so it needs no lock.
pub fn run(plan: &CleanPlan, dedupe_budget: usize) -> Result<CleanOutput> {
    let (map, end) = build_offset_map(plan, dedupe_budget)?;
    // A map that filled up ends the range: only the segments below its end are rewritten.
    let rewritten = plan
        .segments
        .iter()
        .take_while(|s| s.base_offset < end)
        .count();
    let segments = &plan.segments[..rewritten];
    let scfg = plan.config.segment_config();
    let mut stats = CleanStats::default();
    let mut groups = Vec::new();
    let mut expiry: Option<i64> = None;
    let mut walk = TxnWalk::default();
    let result = (|| -> Result<()> {
        for range in group_segments(segments, &plan.config) {
            let members = &segments[range];
            let (Some(first), Some(last)) = (members.first(), members.last()) else {
                continue;
            };
            let mut out =
                Segment::create_with_suffix(&plan.dir, first.base_offset, &scfg, ".cleaned")?;
            let mut replaced = Vec::with_capacity(members.len());
            let mut dropped_aborts = HashSet::new();
            for seg in members {
                stats.bytes_before += seg.size;
                replaced.push((seg.base_offset, seg.size));
                for_each_batch(seg, |h, bytes| {
                    let hz = (h.attributes & DELETE_HORIZON_BIT != 0).then_some(h.base_timestamp);
                    let outcome = if h.is_control() {
                        let mut dropped_abort = false;
                        let o = filter_marker(bytes, h, plan, &mut walk, &mut dropped_abort)?;
                        if dropped_abort {
                            dropped_aborts.insert(h.base_offset);
                        }
                        o
                    } else {
                        if h.is_transactional() {
                            if plan.is_aborted(h) {
                                walk.aborted_data.insert(h.producer_id);
                            } else {
                                walk.committed_data.insert(h.producer_id);
                            }
                        }
                        filter_batch(bytes, h, &map, plan, &mut stats.records_removed)?
                    };
                    match outcome {
                        Outcome::Keep { expiring } => {
                            if expiring && let Some(t) = hz {
                                expiry = Some(expiry.map_or(t, |e| e.min(t)));
                            }
                            append_batch(&mut out, bytes)
                        }
                        Outcome::Drop => Ok(()),
                        Outcome::Rewrite { bytes, expiring } => {
                            if expiring {
                                let nh = BatchHeader::parse(&bytes)?;
                                let t = nh.base_timestamp;
                                expiry = Some(expiry.map_or(t, |e| e.min(t)));
                            }
                            append_batch(&mut out, &bytes)
                        }
                    }
                })?;
            }
            out.seal()?;
            out.flush()?;
            stats.bytes_after += out.size();
            stats.segments += members.len();
            groups.push(CleanedGroup {
                segment: out,
                replaced,
                end_offset: last.upper,
                dropped_aborts,
            });
        }
        Ok(())
    })();
    let output = CleanOutput {
        groups,
        new_checkpoint: end,
        stats,
        next_tombstone_expiry: expiry,
    };
    match result {
        Ok(()) => Ok(output),
        Err(e) => {
            output.discard();
            Err(e)
        }
    }
}

/// Earliest delete horizon among batches of `seg` that carry one (header
/// scan only; used once after open to know when tombstones expire).
pub fn earliest_horizon(seg: &CleanerSegment) -> Result<Option<i64>> {
    let mut scan = BatchScanner::new(Arc::clone(&seg.file), 0, seg.size);
    let mut best: Option<i64> = None;
    while let Some((_, h)) = scan.next_header()? {
        if h.attributes & DELETE_HORIZON_BIT != 0 {
            best = Some(best.map_or(h.base_timestamp, |b| b.min(h.base_timestamp)));
        }
    }
    Ok(best)
}
