//! Kafka magic-2 record batch headers: field layout, parsing from bytes,
//! CRC-32C checking and the in-place header rewrites the log performs
//! (base offset, partition leader epoch, timestamp type / max timestamp).

use crate::error::{LogError, Result};

/// Bytes before the part counted by `batchLength`: baseOffset + batchLength.
pub const LOG_OVERHEAD: usize = 12;
/// Size of the full fixed batch header (everything before the records).
pub const HEADER_SIZE: usize = 61;
/// Smallest legal `batchLength` (header without the 12 bytes of overhead).
pub const MIN_BATCH_LENGTH: i32 = (HEADER_SIZE - LOG_OVERHEAD) as i32;

const BASE_OFFSET: usize = 0;
const BATCH_LENGTH: usize = 8;
const PARTITION_LEADER_EPOCH: usize = 12;
const MAGIC: usize = 16;
const CRC: usize = 17;
const ATTRIBUTES: usize = 21;
const LAST_OFFSET_DELTA: usize = 23;
const BASE_TIMESTAMP: usize = 27;
const MAX_TIMESTAMP: usize = 35;
const PRODUCER_ID: usize = 43;
const PRODUCER_EPOCH: usize = 51;
const BASE_SEQUENCE: usize = 53;
const RECORDS_COUNT: usize = 57;

/// Attribute bits 0-2: compression codec.
pub const COMPRESSION_MASK: i16 = 0x07;
/// Attribute bit 3: timestamp type (1 = LogAppendTime).
pub const TIMESTAMP_TYPE_BIT: i16 = 0x08;
/// Attribute bit 4: transactional batch.
pub const TRANSACTIONAL_BIT: i16 = 0x10;
/// Attribute bit 5: control batch.
pub const CONTROL_BIT: i16 = 0x20;

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(a)
}

/// Decoded fixed header of one record batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// First offset of the batch.
    pub base_offset: i64,
    /// Length of the batch after the 12-byte overhead.
    pub batch_length: i32,
    /// Leader epoch stamped by the leader that appended the batch.
    pub partition_leader_epoch: i32,
    /// Message format version (must be 2).
    pub magic: i8,
    /// Stored CRC-32C of bytes from `attributes` to the end.
    pub crc: u32,
    /// Attribute bits.
    pub attributes: i16,
    /// Offset of the last record relative to `base_offset`.
    pub last_offset_delta: i32,
    /// Timestamp of the first record (CreateTime batches).
    pub base_timestamp: i64,
    /// Largest record timestamp (or append time for LogAppendTime).
    pub max_timestamp: i64,
    /// Producer id, -1 if none.
    pub producer_id: i64,
    /// Producer epoch, -1 if none.
    pub producer_epoch: i16,
    /// Sequence number of the first record, -1 if none.
    pub base_sequence: i32,
    /// Number of records in the batch.
    pub records_count: i32,
}

impl BatchHeader {
    /// Parses the 61-byte header at the start of `b`. Only checks that enough
    /// bytes are present; semantic checks are up to the caller.
    pub fn parse(b: &[u8]) -> Result<BatchHeader> {
        if b.len() < HEADER_SIZE {
            return Err(LogError::corrupt(format!(
                "record batch header needs {HEADER_SIZE} bytes, only {} available",
                b.len()
            )));
        }
        Ok(BatchHeader {
            base_offset: be_i64(b, BASE_OFFSET),
            batch_length: be_i32(b, BATCH_LENGTH),
            partition_leader_epoch: be_i32(b, PARTITION_LEADER_EPOCH),
            magic: b[MAGIC] as i8,
            crc: u32::from_be_bytes([b[CRC], b[CRC + 1], b[CRC + 2], b[CRC + 3]]),
            attributes: be_i16(b, ATTRIBUTES),
            last_offset_delta: be_i32(b, LAST_OFFSET_DELTA),
            base_timestamp: be_i64(b, BASE_TIMESTAMP),
            max_timestamp: be_i64(b, MAX_TIMESTAMP),
            producer_id: be_i64(b, PRODUCER_ID),
            producer_epoch: be_i16(b, PRODUCER_EPOCH),
            base_sequence: be_i32(b, BASE_SEQUENCE),
            records_count: be_i32(b, RECORDS_COUNT),
        })
    }

    /// Reads just baseOffset and batchLength from the first 12 bytes.
    pub fn parse_overhead(b: &[u8]) -> Result<(i64, i32)> {
        if b.len() < LOG_OVERHEAD {
            return Err(LogError::corrupt("truncated record batch overhead"));
        }
        Ok((be_i64(b, BASE_OFFSET), be_i32(b, BATCH_LENGTH)))
    }

    /// Total size of the batch on disk, overhead included.
    pub fn total_size(&self) -> usize {
        LOG_OVERHEAD + self.batch_length.max(0) as usize
    }
    /// Last offset contained in the batch.
    pub fn last_offset(&self) -> i64 {
        self.base_offset + i64::from(self.last_offset_delta)
    }
    /// Offset the next batch would start at.
    pub fn next_offset(&self) -> i64 {
        self.last_offset() + 1
    }
    /// Compression codec id (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
    pub fn compression(&self) -> u8 {
        (self.attributes & COMPRESSION_MASK) as u8
    }
    /// True for LogAppendTime batches.
    pub fn is_log_append_time(&self) -> bool {
        self.attributes & TIMESTAMP_TYPE_BIT != 0
    }
    /// True for control batches (transaction markers).
    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_BIT != 0
    }
    /// True for transactional batches.
    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_BIT != 0
    }
    /// True when the batch carries a producer id (idempotent/transactional).
    pub fn has_producer_id(&self) -> bool {
        self.producer_id >= 0
    }
    /// Sequence number of the last record, wrapping at i32::MAX like Kafka.
    pub fn last_sequence(&self) -> i32 {
        increment_sequence(self.base_sequence, self.last_offset_delta)
    }
    /// Append time to report for this batch: its max timestamp for
    /// LogAppendTime batches, otherwise -1.
    pub fn log_append_time(&self) -> i64 {
        if self.is_log_append_time() {
            self.max_timestamp
        } else {
            -1
        }
    }
}

/// Adds `increment` to a sequence number, wrapping past i32::MAX to 0.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX - increment {
        increment - (i32::MAX - sequence) - 1
    } else {
        sequence + increment
    }
}

/// CRC-32C of a whole batch as Kafka defines it (attributes to end).
pub fn compute_crc(batch: &[u8]) -> u32 {
    crc32c::crc32c(&batch[ATTRIBUTES..])
}

/// Checks the stored CRC of a whole batch (`batch` must be exactly one batch
/// of at least [`HEADER_SIZE`] bytes).
pub fn crc_matches(batch: &[u8], header: &BatchHeader) -> bool {
    batch.len() >= HEADER_SIZE && compute_crc(batch) == header.crc
}

/// Overwrites baseOffset (not covered by the CRC).
pub fn set_base_offset(batch: &mut [u8], offset: i64) {
    batch[BASE_OFFSET..BASE_OFFSET + 8].copy_from_slice(&offset.to_be_bytes());
}

/// Overwrites partitionLeaderEpoch (not covered by the CRC).
pub fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) {
    batch[PARTITION_LEADER_EPOCH..PARTITION_LEADER_EPOCH + 4].copy_from_slice(&epoch.to_be_bytes());
}

/// Sets the timestamp type bit and maxTimestamp, recomputing the CRC only if
/// something changed (as Kafka's `setMaxTimestamp`). Returns true if the
/// batch bytes were modified.
pub fn set_max_timestamp(
    batch: &mut [u8],
    log_append_time: bool,
    max_timestamp: i64,
) -> Result<bool> {
    let header = BatchHeader::parse(batch)?;
    if header.is_log_append_time() == log_append_time && header.max_timestamp == max_timestamp {
        return Ok(false);
    }
    let mut attributes = header.attributes & !TIMESTAMP_TYPE_BIT;
    if log_append_time {
        attributes |= TIMESTAMP_TYPE_BIT;
    }
    batch[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
    batch[MAX_TIMESTAMP..MAX_TIMESTAMP + 8].copy_from_slice(&max_timestamp.to_be_bytes());
    let crc = compute_crc(batch);
    batch[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(true)
}

/// Header-level integrity check used when reading batches back from disk:
/// magic 2, sane length, and (if `check_crc`) the CRC.
pub fn check_stored_batch(batch: &[u8], header: &BatchHeader, check_crc: bool) -> Result<()> {
    if header.batch_length < MIN_BATCH_LENGTH {
        return Err(LogError::corrupt(format!(
            "batch length {} below minimum",
            header.batch_length
        )));
    }
    if header.magic != 2 {
        return Err(LogError::corrupt(format!(
            "unexpected magic {}",
            header.magic
        )));
    }
    if header.last_offset_delta < 0 {
        return Err(LogError::corrupt("negative lastOffsetDelta"));
    }
    if check_crc && !crc_matches(batch, header) {
        return Err(LogError::corrupt(format!(
            "CRC mismatch in batch at offset {}",
            header.base_offset
        )));
    }
    Ok(())
}
