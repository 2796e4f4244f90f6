//! Idempotent and transactional producer state (as Kafka's
//! ProducerStateManager): per producer id the current epoch, the metadata of
//! its last five batches (duplicates and sequence gaps), the first offset of
//! its open transaction and the epoch of the coordinator that last ended
//! one; the open transactions of the partition, from which its last stable
//! offset follows; and the `.snapshot` file that persists it across
//! restarts.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{LogError, Result, codes};
use crate::record_batch::BatchHeader;
use crate::transaction_index::AbortedTxn;
use crate::txn_marker::Marker;

/// A producer as DescribeProducers shows it: (id, epoch, last sequence, last
/// timestamp, coordinator epoch, first offset of its open transaction or -1).
pub type ProducerSummary = (i64, i16, i32, i64, i32, i64);

/// The base sequence of a batch that carries none (a coordinator's write).
pub const NO_SEQUENCE: i32 = -1;
/// The epoch of a producer state that has none (Kafka's RecordBatch.NO_PRODUCER_EPOCH).
const NO_PRODUCER_EPOCH: i16 = -1;

/// How many batches per producer are remembered for duplicate detection.
pub const BATCHES_TO_RETAIN: usize = 5;

const SNAPSHOT_MAGIC: &[u8; 8] = b"PKDPSS02";
/// Snapshots written before transactions were tracked.
const SNAPSHOT_MAGIC_V1: &[u8; 8] = b"PKDPSS01";

/// Metadata of one appended batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    /// Sequence of the first record.
    pub first_seq: i32,
    /// Sequence of the last record.
    pub last_seq: i32,
    /// Offset of the first record.
    pub first_offset: i64,
    /// Offset of the last record.
    pub last_offset: i64,
    /// Batch max timestamp.
    pub max_timestamp: i64,
    /// Log append time reported for the batch, -1 for CreateTime.
    pub append_time: i64,
}

impl BatchMetadata {
    fn from_header(h: &BatchHeader) -> Self {
        BatchMetadata {
            first_seq: h.base_sequence,
            last_seq: h.last_sequence(),
            first_offset: h.base_offset,
            last_offset: h.last_offset(),
            max_timestamp: h.max_timestamp,
            append_time: h.log_append_time(),
        }
    }
}

/// State of one producer id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerEntry {
    /// Current producer epoch.
    pub epoch: i16,
    /// Most recent batches, oldest first.
    pub batches: VecDeque<BatchMetadata>,
    /// Offset of the first batch of its open transaction.
    pub current_txn_first_offset: Option<i64>,
    /// Epoch of the coordinator that wrote its last marker (-1 for none).
    pub coordinator_epoch: i32,
    /// Max timestamp of its last batch or marker, what `producer.id.expiration.ms` counts from
    /// (as Kafka's `lastTimestamp`); [`UNKNOWN_TIMESTAMP`] for an entry loaded without one.
    pub last_timestamp: i64,
}

/// A loaded entry with neither batches nor a known marker time: the first expiry check stamps it
/// with its own time, so it lives a full expiration from then.
pub const UNKNOWN_TIMESTAMP: i64 = i64::MIN;

/// A transaction a marker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    /// Its producer.
    pub producer_id: i64,
    /// Offset of its first batch.
    pub first_offset: i64,
    /// Offset of the marker.
    pub marker_offset: i64,
    /// COMMIT or ABORT.
    pub commit: bool,
    /// The last stable offset once it ended, had it been replicated.
    pub last_stable_offset: i64,
}

impl CompletedTxn {
    /// Its aborted-index entry.
    pub fn aborted(&self) -> AbortedTxn {
        AbortedTxn {
            producer_id: self.producer_id,
            first_offset: self.first_offset,
            last_offset: self.marker_offset,
            last_stable_offset: self.last_stable_offset,
        }
    }
}

/// Outcome of checking a batch against producer state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceCheck {
    /// The batch is new and in sequence: append it.
    Append,
    /// The batch repeats an already appended one: do not write it.
    Duplicate(BatchMetadata),
}

fn in_sequence(last_seq: i32, next_seq: i32) -> bool {
    next_seq == last_seq.wrapping_add(1) || (next_seq == 0 && last_seq == i32::MAX)
}

/// All producer state of a partition.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProducerStateManager {
    producers: HashMap<i64, ProducerEntry>,
    /// Open transactions as (first offset, producer id).
    ongoing: BTreeSet<(i64, i64)>,
    /// Ended transactions whose marker may still be above the high
    /// watermark, as (first offset, marker offset): until it is replicated,
    /// such a transaction still holds the last stable offset back (a new
    /// leader might not have the marker).
    unreplicated: VecDeque<(i64, i64)>,
}

impl ProducerStateManager {
    /// Empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of producers tracked.
    pub fn len(&self) -> usize {
        self.producers.len()
    }
    /// True if no producer is tracked.
    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }
    /// State of one producer.
    pub fn get(&self, producer_id: i64) -> Option<&ProducerEntry> {
        self.producers.get(&producer_id)
    }

    /// Last offset of every producer's most recent batch (the cleaner keeps
    /// those batches, even emptied, so sequence state survives compaction).
    pub fn last_batch_offsets(&self) -> std::collections::HashSet<i64> {
        self.producers
            .values()
            .filter_map(|e| e.batches.back().map(|b| b.last_offset))
            .collect()
    }

    /// Producers whose state holds no batch (their last act was a marker):
    /// the cleaner keeps their markers, which carry their epoch.
    pub fn producers_without_batches(&self) -> std::collections::HashSet<i64> {
        self.producers
            .iter()
            .filter(|(_, e)| e.batches.is_empty())
            .map(|(&id, _)| id)
            .collect()
    }

    /// The first offset of the oldest open transaction.
    pub fn first_open_offset(&self) -> Option<i64> {
        self.ongoing.first().map(|&(first, _)| first)
    }

    /// Every producer as (id, epoch, last sequence, last timestamp,
    /// coordinator epoch, first offset of its open transaction or -1), by id
    /// (DescribeProducers).
    pub fn describe(&self) -> Vec<ProducerSummary> {
        let mut out: Vec<_> = self
            .producers
            .iter()
            .map(|(&id, e)| {
                let last = e.batches.back();
                (
                    id,
                    e.epoch,
                    last.map_or(-1, |b| b.last_seq),
                    last.map_or(-1, |b| b.max_timestamp),
                    e.coordinator_epoch,
                    e.current_txn_first_offset.unwrap_or(-1),
                )
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Forgets every producer without an open transaction whose last batch or marker is
    /// `expiration_ms` or more before `now_ms` (Kafka's `producer.id.expiration.ms`); returns how
    /// many. A later batch of such a producer is treated as from an unknown producer.
    pub fn remove_expired(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        let before = self.producers.len();
        self.producers.retain(|_, e| {
            if e.last_timestamp == UNKNOWN_TIMESTAMP {
                e.last_timestamp = now_ms;
            }
            e.current_txn_first_offset.is_some()
                || now_ms.saturating_sub(e.last_timestamp) < expiration_ms
        });
        before - self.producers.len()
    }

    /// Open transactions as (producer id, first offset), oldest first.
    pub fn open_transactions(&self) -> Vec<(i64, i64)> {
        self.ongoing
            .iter()
            .map(|&(first, pid)| (pid, first))
            .collect()
    }

    /// The last stable offset for high watermark `hw`: below the first
    /// offset of every open transaction and of every ended one whose marker
    /// is not below `hw` yet. Forgets ended transactions below `hw` (the
    /// high watermark only moves forward, but for truncation, which rebuilds
    /// this state).
    pub fn last_stable_offset(&mut self, hw: i64) -> i64 {
        while self
            .unreplicated
            .front()
            .is_some_and(|&(_, marker)| marker < hw)
        {
            self.unreplicated.pop_front();
        }
        let open = self.first_open_offset().unwrap_or(i64::MAX);
        let ended = self
            .unreplicated
            .iter()
            .map(|&(first, _)| first)
            .min()
            .unwrap_or(i64::MAX);
        hw.min(open).min(ended)
    }

    /// Checks a marker before it is written: its producer epoch may not be
    /// older than the producer's (INVALID_PRODUCER_EPOCH), nor its
    /// coordinator epoch older than the last marker's
    /// (TRANSACTION_COORDINATOR_FENCED).
    pub fn check_marker(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        marker: Marker,
    ) -> Result<()> {
        let Some(entry) = self.producers.get(&producer_id) else {
            return Ok(());
        };
        if producer_epoch < entry.epoch {
            return Err(LogError::new(
                codes::INVALID_PRODUCER_EPOCH,
                format!(
                    "marker for producer {producer_id} epoch {producer_epoch} is older than its epoch {}",
                    entry.epoch
                ),
            ));
        }
        if marker.coordinator_epoch < entry.coordinator_epoch {
            return Err(LogError::new(
                codes::TRANSACTION_COORDINATOR_FENCED,
                format!(
                    "marker for producer {producer_id} from coordinator epoch {} after one from epoch {}",
                    marker.coordinator_epoch, entry.coordinator_epoch
                ),
            ));
        }
        Ok(())
    }

    /// Checks an incoming batch (with a producer id) before it is written.
    pub fn check(&self, h: &BatchHeader) -> Result<SequenceCheck> {
        let Some(entry) = self.producers.get(&h.producer_id) else {
            // Unknown producers are accepted at any sequence (as Kafka 4).
            return Ok(SequenceCheck::Append);
        };
        if entry.current_txn_first_offset.is_some()
            && !h.is_transactional()
            && h.producer_epoch == entry.epoch
        {
            return Err(LogError::new(
                codes::INVALID_TXN_STATE,
                format!(
                    "producer {} has an open transaction but wrote a non-transactional batch",
                    h.producer_id
                ),
            ));
        }
        if h.producer_epoch < entry.epoch {
            return Err(LogError::new(
                codes::INVALID_PRODUCER_EPOCH,
                format!(
                    "producer {} epoch {} is older than the current epoch {}",
                    h.producer_id, h.producer_epoch, entry.epoch
                ),
            ));
        }
        if h.base_sequence == NO_SEQUENCE && h.is_transactional() {
            // A coordinator's write (transactional offsets in __consumer_offsets): Kafka checks
            // only the epoch of such batches, never a sequence.
            return Ok(SequenceCheck::Append);
        }
        let first = h.base_sequence;
        let last = h.last_sequence();
        if h.producer_epoch == entry.epoch
            && let Some(dup) = entry
                .batches
                .iter()
                .find(|b| b.first_seq == first && b.last_seq == last)
        {
            return Ok(SequenceCheck::Duplicate(*dup));
        }
        if h.producer_epoch != entry.epoch {
            if first != 0 {
                return Err(LogError::new(
                    codes::OUT_OF_ORDER_SEQUENCE_NUMBER,
                    format!(
                        "producer {} new epoch {} must start at sequence 0, got {first}",
                        h.producer_id, h.producer_epoch
                    ),
                ));
            }
        } else {
            // No batch at this epoch yet (a marker bumped it, as every transaction's end does in
            // transaction version 2): the next batch starts at sequence 0, as in Kafka. A later
            // batch of the same transaction, verified while the first was refused (say with
            // CONCURRENT_TRANSACTIONS), must not be appended before it.
            let last_seq = entry.batches.back().map_or(NO_SEQUENCE, |b| b.last_seq);
            if entry.epoch != NO_PRODUCER_EPOCH && !in_sequence(last_seq, first) {
                return Err(LogError::new(
                    codes::OUT_OF_ORDER_SEQUENCE_NUMBER,
                    format!(
                        "producer {} out of order sequence: expected {}, got {first}",
                        h.producer_id,
                        if last_seq == i32::MAX {
                            0
                        } else {
                            last_seq + 1
                        }
                    ),
                ));
            }
        }
        Ok(SequenceCheck::Append)
    }

    /// Records an appended batch (also used when replaying the log);
    /// `marker` is what a control batch says. Returns the transaction a
    /// marker ended, if it ended one.
    pub fn update(&mut self, h: &BatchHeader, marker: Option<Marker>) -> Option<CompletedTxn> {
        if !h.has_producer_id() {
            return None;
        }
        let entry = self
            .producers
            .entry(h.producer_id)
            .or_insert_with(|| ProducerEntry {
                epoch: h.producer_epoch,
                batches: VecDeque::new(),
                current_txn_first_offset: None,
                coordinator_epoch: -1,
                last_timestamp: UNKNOWN_TIMESTAMP,
            });
        entry.last_timestamp = h.max_timestamp;
        if entry.epoch != h.producer_epoch {
            entry.epoch = h.producer_epoch;
            entry.batches.clear();
        }
        if h.is_control() {
            let marker = marker?;
            entry.coordinator_epoch = marker.coordinator_epoch;
            let first_offset = entry.current_txn_first_offset.take()?;
            self.ongoing.remove(&(first_offset, h.producer_id));
            self.unreplicated.push_back((first_offset, h.base_offset));
            let last_stable_offset = self.first_open_offset().unwrap_or(h.base_offset + 1);
            return Some(CompletedTxn {
                producer_id: h.producer_id,
                first_offset,
                marker_offset: h.base_offset,
                commit: marker.commit,
                last_stable_offset,
            });
        }
        if h.is_transactional() && entry.current_txn_first_offset.is_none() {
            entry.current_txn_first_offset = Some(h.base_offset);
            self.ongoing.insert((h.base_offset, h.producer_id));
        }
        if h.base_sequence == NO_SEQUENCE {
            return None; // no sequence to remember
        }
        if entry.batches.len() >= BATCHES_TO_RETAIN {
            entry.batches.pop_front();
        }
        entry.batches.push_back(BatchMetadata::from_header(h));
        None
    }

    /// Path of the snapshot covering the log up to `offset`.
    pub fn snapshot_path(dir: &Path, offset: i64) -> PathBuf {
        dir.join(format!("{offset:020}.snapshot"))
    }

    /// Serialises the state (own format: magic, entries, CRC-32C trailer).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.producers.len() * 64);
        out.extend_from_slice(SNAPSHOT_MAGIC);
        out.extend_from_slice(&(self.producers.len() as u32).to_be_bytes());
        let mut ids: Vec<&i64> = self.producers.keys().collect();
        ids.sort();
        for id in ids {
            let Some(e) = self.producers.get(id) else {
                continue;
            };
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&e.epoch.to_be_bytes());
            out.extend_from_slice(&e.current_txn_first_offset.unwrap_or(-1).to_be_bytes());
            out.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
            out.push(e.batches.len() as u8);
            for b in &e.batches {
                out.extend_from_slice(&b.first_seq.to_be_bytes());
                out.extend_from_slice(&b.last_seq.to_be_bytes());
                out.extend_from_slice(&b.first_offset.to_be_bytes());
                out.extend_from_slice(&b.last_offset.to_be_bytes());
                out.extend_from_slice(&b.max_timestamp.to_be_bytes());
                out.extend_from_slice(&b.append_time.to_be_bytes());
            }
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    /// Parses a snapshot written by [`Self::encode`].
    pub fn decode(data: &[u8]) -> Result<Self> {
        let bad = |why: &str| LogError::corrupt(format!("invalid producer state snapshot: {why}"));
        if data.len() < SNAPSHOT_MAGIC.len() + 8 {
            return Err(bad("bad header"));
        }
        let with_txns = match &data[..8] {
            m if m == SNAPSHOT_MAGIC => true,
            m if m == SNAPSHOT_MAGIC_V1 => false,
            _ => return Err(bad("bad header")),
        };
        let (body, trailer) = data.split_at(data.len() - 4);
        let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        if crc32c::crc32c(body) != stored {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Reader { data: body, pos: 8 };
        let count = r.u32()?;
        let mut producers = HashMap::new();
        let mut ongoing = BTreeSet::new();
        for _ in 0..count {
            let id = r.i64()?;
            let epoch = r.i16()?;
            let (current_txn_first_offset, coordinator_epoch) = if with_txns {
                let first = r.i64()?;
                (if first >= 0 { Some(first) } else { None }, r.i32()?)
            } else {
                (None, -1)
            };
            if let Some(first) = current_txn_first_offset {
                ongoing.insert((first, id));
            }
            let n = r.u8()? as usize;
            let mut batches = VecDeque::with_capacity(n);
            for _ in 0..n {
                batches.push_back(BatchMetadata {
                    first_seq: r.i32()?,
                    last_seq: r.i32()?,
                    first_offset: r.i64()?,
                    last_offset: r.i64()?,
                    max_timestamp: r.i64()?,
                    append_time: r.i64()?,
                });
            }
            let last_timestamp = batches
                .back()
                .map_or(UNKNOWN_TIMESTAMP, |b| b.max_timestamp);
            producers.insert(
                id,
                ProducerEntry {
                    epoch,
                    batches,
                    current_txn_first_offset,
                    coordinator_epoch,
                    last_timestamp,
                },
            );
        }
        if r.pos != body.len() {
            return Err(bad("trailing bytes"));
        }
        Ok(ProducerStateManager {
            producers,
            ongoing,
            unreplicated: VecDeque::new(),
        })
    }

    /// Writes the snapshot for `offset` atomically (temp file, fsync, rename).
    pub fn write_snapshot(&self, dir: &Path, offset: i64) -> Result<PathBuf> {
        let path = Self::snapshot_path(dir, offset);
        let tmp = path.with_extension("snapshot.tmp");
        let data = self.encode();
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&data)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| LogError::io(format!("writing snapshot {}", path.display()), e))?;
        Ok(path)
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self
            .data
            .get(self.pos..self.pos + N)
            .ok_or_else(|| LogError::corrupt("invalid producer state snapshot: truncated"))?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        self.pos += N;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take::<1>()?[0])
    }
    fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_be_bytes(self.take()?))
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.take()?))
    }
    fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.take()?))
    }
}
