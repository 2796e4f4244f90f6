//! Validation of a Produce request's `records` for one partition, and the
//! in-place rewrite that assigns offsets, leader epoch and timestamps (the
//! magic-2 subset of Kafka's LogValidator). The records inside every batch,
//! compressed ones included, are parsed: count and offset deltas must match
//! the header, and a compacted topic refuses records without a key.

use std::path::Path;

use crate::compression;
use crate::error::{LogError, Result, codes};
use crate::record_batch::{self, BatchHeader, HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH};
use crate::records::{ByteSource, ReadSource, SliceSource, next_record, validate_records};

/// Per-log settings validation depends on.
#[derive(Debug, Clone, Copy)]
pub struct ValidateOptions<'a> {
    /// `max.message.bytes`: largest accepted batch.
    pub max_message_bytes: usize,
    /// The topic is compacted: every record needs a key.
    pub compacted: bool,
    /// The partition's directory, named `topic-partition` as Kafka names the
    /// partition in its messages.
    pub log_dir: &'a Path,
    /// For a CreateTime topic, the record timestamps accepted: `[now -
    /// message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]`.
    pub timestamp_bounds: Option<(i64, i64)>,
    /// The broker's own coordinator writes (transactional offsets): its
    /// transactional batches carry no sequence.
    pub from_coordinator: bool,
}

/// Where a batch sits in the append buffer and what it contains.
#[derive(Debug, Clone, Copy)]
pub struct ValidatedBatch {
    /// Byte position of the batch in the buffer.
    pub start: usize,
    /// Total size including the 12-byte overhead.
    pub size: usize,
    /// Header as received (updated by [`assign_in_place`]).
    pub header: BatchHeader,
    /// Largest record timestamp, computed from the records; `None` for a
    /// batch without records.
    pub record_max_timestamp: Option<i64>,
}

/// Validates `buf` as a sequence of whole magic-2 batches.
///
/// Error codes: an empty buffer is INVALID_RECORD (87) as in Kafka's
/// ProduceRequest validation; bad framing or CRC is CORRUPT_MESSAGE (2);
/// magic other than 2 is UNSUPPORTED_FOR_MESSAGE_FORMAT (43); a batch bigger
/// than `max_message_bytes` is MESSAGE_TOO_LARGE (10); count/offset/record
/// inconsistencies, control batches, unknown codecs and invalid producer
/// fields are INVALID_RECORD (87).
pub fn validate(buf: &[u8], max_message_bytes: usize) -> Result<Vec<ValidatedBatch>> {
    validate_with(
        buf,
        &ValidateOptions {
            max_message_bytes,
            compacted: false,
            log_dir: Path::new(""),
            timestamp_bounds: None,
            from_coordinator: false,
        },
    )
}

/// [`validate`] with all per-log options; keyless records on a compacted
/// topic are INVALID_RECORD (87) with a record error each, as in Kafka.
pub fn validate_with(buf: &[u8], opts: &ValidateOptions) -> Result<Vec<ValidatedBatch>> {
    let max_message_bytes = opts.max_message_bytes;
    if buf.is_empty() {
        return Err(LogError::invalid_record(
            "produce request contains no record batch",
        ));
    }
    let frames = frame(buf)?;
    let mut out = Vec::with_capacity(frames.len());
    for (start, size) in frames {
        let batch = &buf[start..start + size];
        check_magic(batch)?;
        if size > max_message_bytes {
            return Err(LogError::new(
                codes::MESSAGE_TOO_LARGE,
                format!(
                    "record batch of {size} bytes exceeds max.message.bytes {max_message_bytes}"
                ),
            ));
        }
        let header = checked_header(batch)?;
        let record_max_timestamp = validate_batch(batch, &header, opts)?;
        out.push(ValidatedBatch {
            start,
            size,
            header,
            record_max_timestamp,
        });
    }
    if out.len() > 1 && out.iter().any(|b| b.header.has_producer_id()) {
        return Err(LogError::invalid_record(
            "an idempotent or transactional produce must contain exactly one record batch",
        ));
    }
    Ok(out)
}

/// Checks batches a leader wrote, as a follower appends them: whole batches
/// of magic 2 with matching CRCs, and offsets that only increase. Records are
/// not decoded (the leader validated them), and nothing is reassigned.
pub fn validate_replicated(buf: &[u8]) -> Result<Vec<ValidatedBatch>> {
    let mut out: Vec<ValidatedBatch> = Vec::new();
    for (start, size) in frame(buf)? {
        let header = checked_header(&buf[start..start + size])?;
        if header.last_offset_delta < 0 || header.base_offset < 0 {
            return Err(LogError::corrupt(format!(
                "replicated batch at offset {} has lastOffsetDelta {}",
                header.base_offset, header.last_offset_delta
            )));
        }
        if let Some(prev) = out.last()
            && header.base_offset <= prev.header.last_offset()
        {
            return Err(LogError::corrupt(format!(
                "replicated batch offsets go back: {} after {}",
                header.base_offset,
                prev.header.last_offset()
            )));
        }
        out.push(ValidatedBatch {
            start,
            size,
            record_max_timestamp: Some(header.max_timestamp),
            header,
        });
    }
    Ok(out)
}

fn check_magic(batch: &[u8]) -> Result<()> {
    let magic = batch[16] as i8;
    if magic != 2 {
        return Err(LogError::new(
            codes::UNSUPPORTED_FOR_MESSAGE_FORMAT,
            format!("record batch magic {magic} is not supported (only magic 2)"),
        ));
    }
    Ok(())
}

/// Magic 2, a header that parses, and the CRC the batch carries.
fn checked_header(batch: &[u8]) -> Result<BatchHeader> {
    check_magic(batch)?;
    let header = BatchHeader::parse(batch)?;
    if !record_batch::crc_matches(batch, &header) {
        return Err(LogError::corrupt(format!(
            "record batch CRC mismatch (stored {:#010x}, computed {:#010x})",
            header.crc,
            record_batch::compute_crc(batch)
        )));
    }
    Ok(header)
}

/// (start, size) of each batch: the buffer must be exactly a sequence of whole batches.
fn frame(buf: &[u8]) -> Result<Vec<(usize, usize)>> {
    let mut frames = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() {
        let (_, batch_length) = BatchHeader::parse_overhead(&buf[pos..]).map_err(|_| {
            LogError::corrupt(format!(
                "{} trailing bytes do not form a record batch",
                buf.len() - pos
            ))
        })?;
        if batch_length < MIN_BATCH_LENGTH {
            return Err(LogError::corrupt(format!(
                "record batch length {batch_length} is smaller than the minimum {MIN_BATCH_LENGTH}"
            )));
        }
        let size = LOG_OVERHEAD + batch_length as usize;
        if buf.len() - pos < size {
            return Err(LogError::corrupt(format!(
                "record batch of {size} bytes truncated to {} bytes",
                buf.len() - pos
            )));
        }
        frames.push((pos, size));
        pos += size;
    }
    Ok(frames)
}

fn validate_batch(
    batch: &[u8],
    header: &BatchHeader,
    opts: &ValidateOptions,
) -> Result<Option<i64>> {
    if header.last_offset_delta < 0 {
        return Err(LogError::invalid_record(format!(
            "invalid lastOffsetDelta {}",
            header.last_offset_delta
        )));
    }
    if i64::from(header.records_count) != i64::from(header.last_offset_delta) + 1 {
        return Err(LogError::invalid_record(format!(
            "recordsCount {} does not match lastOffsetDelta {}",
            header.records_count, header.last_offset_delta
        )));
    }
    if header.is_control() {
        return Err(LogError::invalid_record(
            "clients may not send control batches",
        ));
    }
    if header.has_producer_id()
        && header.base_sequence < 0
        && !(opts.from_coordinator && header.is_transactional() && header.base_sequence == -1)
    {
        return Err(LogError::invalid_record(format!(
            "invalid base sequence {} for producer {}",
            header.base_sequence, header.producer_id
        )));
    }
    if header.is_transactional() && !header.has_producer_id() {
        return Err(LogError::invalid_record(
            "transactional batch without a producer id",
        ));
    }
    let codec = header.compression();
    if !compression::is_known_codec(codec) {
        return Err(LogError::invalid_record(format!(
            "unknown compression codec {codec}"
        )));
    }
    let payload = &batch[HEADER_SIZE..];
    let summary = if codec == compression::NONE {
        validate_records(&mut SliceSource::new(payload))?
    } else {
        let reader = compression::decompressing_reader(codec, payload)?;
        validate_records(&mut ReadSource::new(reader))?
    };
    let timestamps_refused = if header.is_log_append_time() {
        // Kafka reads every record of a batch flagged LogAppendTime as the batch's
        // maxTimestamp, and refuses the flag unless a CreateTime topic checks that
        // timestamp instead: on a LogAppendTime topic, or without a timestamp (-1).
        summary.count > 0
            && match opts.timestamp_bounds {
                Some((low, high)) if header.max_timestamp != -1 => {
                    header.max_timestamp < low || header.max_timestamp > high
                }
                _ => true,
            }
    } else {
        match (
            opts.timestamp_bounds,
            summary.min_timestamp_delta,
            summary.max_timestamp_delta,
        ) {
            (Some((low, high)), Some(min), Some(max)) => {
                header.base_timestamp.saturating_add(min) < low
                    || header.base_timestamp.saturating_add(max) > high
            }
            _ => false,
        }
    };
    if (opts.compacted && summary.keyless > 0) || timestamps_refused {
        // Walked again only on this error path, so valid batches pay nothing for the list.
        let failed = if codec == compression::NONE {
            record_errors(&mut SliceSource::new(payload), header, opts)?
        } else {
            let reader = compression::decompressing_reader(codec, payload)?;
            record_errors(&mut ReadSource::new(reader), header, opts)?
        };
        if failed.timestamps {
            return Err(LogError::invalid_timestamps(failed.errors));
        }
        if !failed.errors.is_empty() {
            return Err(LogError::invalid_records(failed.errors));
        }
    }
    if summary.count != header.records_count {
        return Err(LogError::invalid_record(format!(
            "batch declares {} records but contains {}",
            header.records_count, summary.count
        )));
    }
    Ok(summary.max_timestamp_delta.map(|d| {
        if header.is_log_append_time() {
            header.max_timestamp
        } else {
            header.base_timestamp.wrapping_add(d)
        }
    }))
}

/// Assigns offsets starting at `base_offset`, stamps `leader_epoch`, and
/// fixes up the timestamp type / max timestamp (recomputing the CRC only
/// when the header changes). `log_append_time` is `Some(now)` for
/// LogAppendTime topics. Returns the next offset after the last batch.
pub fn assign_in_place(
    buf: &mut [u8],
    batches: &mut [ValidatedBatch],
    base_offset: i64,
    leader_epoch: i32,
    log_append_time: Option<i64>,
) -> Result<i64> {
    let mut next = base_offset;
    for b in batches.iter_mut() {
        let bytes = &mut buf[b.start..b.start + b.size];
        record_batch::set_base_offset(bytes, next);
        record_batch::set_partition_leader_epoch(bytes, leader_epoch);
        match log_append_time {
            Some(now) => {
                record_batch::set_max_timestamp(bytes, true, now)?;
            }
            None => {
                let max_ts = b.record_max_timestamp.unwrap_or(b.header.max_timestamp);
                record_batch::set_max_timestamp(bytes, false, max_ts)?;
            }
        }
        b.header = BatchHeader::parse(bytes)?;
        next = b.header.next_offset();
    }
    Ok(next)
}

/// The records that fail a batch, each with Kafka's message (LogValidator's
/// validateKey, then validateTimestamp): `timestamps` when any failed for its
/// timestamp or for a LogAppendTime flag a producer may not set, which makes
/// the batch's error INVALID_TIMESTAMP.
struct RecordErrors {
    errors: Vec<(i32, String)>,
    timestamps: bool,
}

fn record_errors<S: ByteSource>(
    src: &mut S,
    header: &BatchHeader,
    opts: &ValidateOptions,
) -> Result<RecordErrors> {
    let topic_partition = opts
        .log_dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let mut failed = RecordErrors {
        errors: Vec::new(),
        timestamps: false,
    };
    let mut index: i32 = 0;
    while let Some(rec) = next_record(src)? {
        let timestamp = if header.is_log_append_time() {
            header.max_timestamp
        } else {
            header.base_timestamp.saturating_add(rec.timestamp_delta)
        };
        let offset = header
            .base_offset
            .saturating_add(i64::from(rec.offset_delta));
        if opts.compacted && !rec.has_key {
            failed.errors.push((
                index,
                format!("Compacted topic cannot accept message without key in topic partition {topic_partition}"),
            ));
        } else if let Some((low, high)) = opts.timestamp_bounds
            // Kafka leaves records without a timestamp (-1) alone.
            && timestamp != -1
            && (timestamp < low || timestamp > high)
        {
            failed.timestamps = true;
            failed.errors.push((
                index,
                format!(
                    "Timestamp {timestamp} of message with offset {offset} is out of range. \
                     The timestamp should be within [{low}, {high}]"
                ),
            ));
        } else if header.is_log_append_time()
            && (opts.timestamp_bounds.is_none() || timestamp == -1)
        {
            failed.timestamps = true;
            failed.errors.push((
                index,
                format!(
                    "Invalid timestamp type in message with offset {offset} and timestamp {timestamp}. \
                     Producer should not set timestamp type to LogAppendTime."
                ),
            ));
        }
        index = index.saturating_add(1);
    }
    Ok(failed)
}
