//! Idempotent-producer state (as Kafka's ProducerStateManager): per producer
//! id the current epoch and the metadata of its last five batches, used to
//! detect duplicates and sequence gaps, plus the `.snapshot` file that
//! persists it across restarts.

use std::collections::{HashMap, VecDeque};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{LogError, Result, codes};
use crate::record_batch::BatchHeader;

/// How many batches per producer are remembered for duplicate detection.
pub const BATCHES_TO_RETAIN: usize = 5;

const SNAPSHOT_MAGIC: &[u8; 8] = b"PKDPSS01";

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

    /// Checks an incoming batch (with a producer id) before it is written.
    pub fn check(&self, h: &BatchHeader) -> Result<SequenceCheck> {
        let Some(entry) = self.producers.get(&h.producer_id) else {
            // Unknown producers are accepted at any sequence (as Kafka 4).
            return Ok(SequenceCheck::Append);
        };
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
        if h.producer_epoch < entry.epoch {
            return Err(LogError::new(
                codes::INVALID_PRODUCER_EPOCH,
                format!(
                    "producer {} epoch {} is older than the current epoch {}",
                    h.producer_id, h.producer_epoch, entry.epoch
                ),
            ));
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
        } else if let Some(last_batch) = entry.batches.back()
            && !in_sequence(last_batch.last_seq, first)
        {
            return Err(LogError::new(
                codes::OUT_OF_ORDER_SEQUENCE_NUMBER,
                format!(
                    "producer {} out of order sequence: expected {}, got {first}",
                    h.producer_id,
                    if last_batch.last_seq == i32::MAX {
                        0
                    } else {
                        last_batch.last_seq + 1
                    }
                ),
            ));
        }
        Ok(SequenceCheck::Append)
    }

    /// Records an appended batch (also used when replaying the log).
    pub fn update(&mut self, h: &BatchHeader) {
        if !h.has_producer_id() || h.is_control() {
            return;
        }
        let entry = self
            .producers
            .entry(h.producer_id)
            .or_insert_with(|| ProducerEntry {
                epoch: h.producer_epoch,
                batches: VecDeque::new(),
            });
        if entry.epoch != h.producer_epoch {
            entry.epoch = h.producer_epoch;
            entry.batches.clear();
        }
        if entry.batches.len() >= BATCHES_TO_RETAIN {
            entry.batches.pop_front();
        }
        entry.batches.push_back(BatchMetadata::from_header(h));
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
        if data.len() < SNAPSHOT_MAGIC.len() + 8 || &data[..8] != SNAPSHOT_MAGIC {
            return Err(bad("bad header"));
        }
        let (body, trailer) = data.split_at(data.len() - 4);
        let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        if crc32c::crc32c(body) != stored {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Reader { data: body, pos: 8 };
        let count = r.u32()?;
        let mut producers = HashMap::new();
        for _ in 0..count {
            let id = r.i64()?;
            let epoch = r.i16()?;
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
            producers.insert(id, ProducerEntry { epoch, batches });
        }
        if r.pos != body.len() {
            return Err(bad("trailing bytes"));
        }
        Ok(ProducerStateManager { producers })
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
