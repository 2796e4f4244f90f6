//! Record-level timestamp lookups inside one stored batch: the first record
//! at or after a target timestamp, and the first record carrying an exact
//! timestamp. Compressed batches are decompressed here (and only here).

use crate::compression::decompressing_reader;
use crate::error::Result;
use crate::record_batch::{BatchHeader, HEADER_SIZE};
use crate::records::{ReadSource, next_record};

/// Walks records of `batch` and returns the first (offset, timestamp)
/// satisfying `pred`. LogAppendTime batches give every record the batch's
/// max timestamp.
fn first_record_where(
    batch: &[u8],
    h: &BatchHeader,
    pred: impl Fn(i64) -> bool,
) -> Result<Option<(i64, i64)>> {
    if h.is_log_append_time() {
        return Ok(pred(h.max_timestamp).then_some((h.base_offset, h.max_timestamp)));
    }
    let payload = batch.get(HEADER_SIZE..).unwrap_or(&[]);
    let reader = decompressing_reader(h.compression(), payload)?;
    let mut src = ReadSource::new(reader);
    while let Some(rec) = next_record(&mut src)? {
        let ts = h.base_timestamp.wrapping_add(rec.timestamp_delta);
        if pred(ts) {
            return Ok(Some((h.base_offset + i64::from(rec.offset_delta), ts)));
        }
    }
    Ok(None)
}

/// First record with timestamp >= `target` and offset >= `min_offset`.
pub fn first_at_or_after(
    batch: &[u8],
    h: &BatchHeader,
    target: i64,
    min_offset: i64,
) -> Result<Option<(i64, i64)>> {
    if h.is_log_append_time() {
        if h.max_timestamp >= target {
            return Ok(Some((h.base_offset.max(min_offset), h.max_timestamp)));
        }
        return Ok(None);
    }
    let payload = batch.get(HEADER_SIZE..).unwrap_or(&[]);
    let reader = decompressing_reader(h.compression(), payload)?;
    let mut src = ReadSource::new(reader);
    while let Some(rec) = next_record(&mut src)? {
        let ts = h.base_timestamp.wrapping_add(rec.timestamp_delta);
        let offset = h.base_offset + i64::from(rec.offset_delta);
        if ts >= target && offset >= min_offset {
            return Ok(Some((offset, ts)));
        }
    }
    Ok(None)
}

/// First record whose timestamp equals `timestamp` exactly.
pub fn first_with_timestamp(
    batch: &[u8],
    h: &BatchHeader,
    timestamp: i64,
) -> Result<Option<(i64, i64)>> {
    first_record_where(batch, h, |ts| ts == timestamp)
}
