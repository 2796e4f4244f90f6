//! Topic-level `compression.type` at append: when it names a codec other
//! than the one a producer used, the batch's records are decompressed and
//! compressed again with the topic's codec (and level); the header keeps
//! every field except the codec bits, the length and the CRC.

use std::io::Read;

use crate::compression;
use crate::error::{LogError, Result};
use crate::log_config::TopicCompression;
use crate::record_batch::{self, BatchHeader, COMPRESSION_MASK, HEADER_SIZE, LOG_OVERHEAD};

/// Refuse to inflate one batch beyond this many record bytes.
pub const MAX_DECOMPRESSED_BYTES: u64 = 256 * 1024 * 1024;

const BATCH_LENGTH: usize = 8;
const CRC: usize = 17;
const ATTRIBUTES: usize = 21;

/// The codec a batch written with `batch_codec` must be stored in, if that
/// differs from `batch_codec` (i.e. the batch must be recompressed).
pub fn target_codec(topic: TopicCompression, batch_codec: u8) -> Option<u8> {
    match topic {
        TopicCompression::Producer => None,
        TopicCompression::Codec(c) if c == batch_codec => None,
        TopicCompression::Codec(c) => Some(c),
    }
}

/// Decompressed record bytes of a batch (the bytes after the header).
pub fn raw_records(batch: &[u8], header: &BatchHeader) -> Result<Vec<u8>> {
    let payload = batch.get(HEADER_SIZE..).unwrap_or(&[]);
    if header.compression() == compression::NONE {
        return Ok(payload.to_vec());
    }
    let reader = compression::decompressing_reader(header.compression(), payload)?;
    let mut out = Vec::with_capacity(payload.len().saturating_mul(3));
    reader
        .take(MAX_DECOMPRESSED_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| LogError::corrupt(format!("failed to decompress records: {e}")))?;
    if out.len() as u64 > MAX_DECOMPRESSED_BYTES {
        return Err(LogError::corrupt(format!(
            "batch decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes"
        )));
    }
    Ok(out)
}

/// Builds a batch with `header`'s fields (and its first 61 bytes from
/// `header_bytes`), codec `codec` and the given record payload (already in
/// that codec), with a fresh length and CRC.
pub fn build_batch(header_bytes: &[u8], codec: u8, payload: &[u8]) -> Result<Vec<u8>> {
    let head = header_bytes
        .get(..HEADER_SIZE)
        .ok_or_else(|| LogError::corrupt("record batch header truncated"))?;
    let mut out = Vec::with_capacity(HEADER_SIZE + payload.len());
    out.extend_from_slice(head);
    out.extend_from_slice(payload);
    let length = i32::try_from(out.len() - LOG_OVERHEAD)
        .map_err(|_| LogError::invalid_record("recompressed batch too large"))?;
    out[BATCH_LENGTH..BATCH_LENGTH + 4].copy_from_slice(&length.to_be_bytes());
    let attrs = i16::from_be_bytes([out[ATTRIBUTES], out[ATTRIBUTES + 1]]);
    let attrs = (attrs & !COMPRESSION_MASK) | i16::from(codec);
    out[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attrs.to_be_bytes());
    let crc = record_batch::compute_crc(&out);
    out[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

/// Re-encodes one whole batch with codec `target` at `level`.
pub fn recompress_batch(
    batch: &[u8],
    header: &BatchHeader,
    target: u8,
    level: Option<i32>,
) -> Result<Vec<u8>> {
    let raw = raw_records(batch, header)?;
    let payload = compression::compress(target, level, &raw)?;
    build_batch(batch, target, &payload)
}
